package dev.kvmq.it.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.UnexpectedAlertBehaviour;
import org.openqa.selenium.bidi.module.Network;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's headless chromium, driven by Debian's chromedriver through Selenium: never a downloaded
 * browser or driver (both paths are given, so Selenium Manager is not asked). The user signs in
 * with HTTP Basic: the browser sends the user's {@code Authorization} header with every request (or
 * none, for a browser without a user). Every HTTP request the page makes and every response status
 * is recorded through WebDriver BiDi events, to show what the page fetches.
 */
public final class Browser implements AutoCloseable {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  /** A request the page made: when (System.nanoTime), method and URL. */
  record Request(long atNanos, String method, String url) {}

  /** The driver, for the test to look at pages with. */
  public final ChromeDriver driver;

  private final Network network;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, Integer> statuses = new ConcurrentHashMap<>();

  /**
   * Starts a browser.
   *
   * @param profile a fresh directory for the browser's profile
   * @param user the user to sign in as, or null to send no credentials
   * @param password the user's password
   * @param log chromedriver's log file
   */
  /**
   * Starts a browser with a fresh profile and its chromedriver log in a new directory {@code
   * name-<nanos>} of the ITs' work directory ({@code kvmq.it.work}, else {@code target/it-work}).
   *
   * @param name what the directory is named after
   * @param user the user to sign in as, or null to send no credentials
   * @param password the user's password
   * @return the browser
   * @throws java.io.IOException if the directories can't be made
   */
  public static Browser inWorkDirectory(String name, String user, String password)
      throws java.io.IOException {
    Path work =
        Files.createDirectories(
            Path.of(System.getProperty("kvmq.it.work", "target/it-work"))
                .toAbsolutePath()
                .resolve(name + "-" + System.nanoTime()));
    return new Browser(
        Files.createDirectories(work.resolve("profile")),
        user,
        password,
        work.resolve("chromedriver.log"));
  }

  public Browser(Path profile, String user, String password, Path log) {
    assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
        .as(
            "the dashboard tests need Debian's chromium and chromedriver at %s and %s: "
                + "install them with `apt-get install -y chromium chromium-driver` (.ci/run does)",
            CHROMIUM, CHROMEDRIVER)
        .isTrue();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--user-data-dir=" + profile,
        "--window-size=1280,1000",
        "--lang=en-US");
    options.setCapability("webSocketUrl", true); // WebDriver BiDi
    options.setUnhandledPromptBehaviour(UnexpectedAlertBehaviour.IGNORE);
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(log.toFile())
            .build();
    driver = new ChromeDriver(service, options);
    try {
      driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
      network = new Network(driver);
      if (user != null) {
        // HTTP Basic for every request of this tab (page, scripts, fetch, event streams),
        // through chromedriver's own CDP endpoint: no CDP client that must match the
        // browser's version. (BiDi's network.continueWithAuth fails here with
        // "Invalid InterceptionId" on chromium 150.)
        String token =
            Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        driver.executeCdpCommand("Network.enable", Map.of());
        driver.executeCdpCommand(
            "Network.setExtraHTTPHeaders",
            Map.of("headers", Map.of("Authorization", "Basic " + token)));
      }
      network.onBeforeRequestSent(
          r ->
              requests.add(
                  new Request(
                      System.nanoTime(), r.getRequest().getMethod(), r.getRequest().getUrl())));
      network.onResponseCompleted(
          r -> statuses.put(r.getRequest().getUrl(), r.getResponseData().getStatus()));
    } catch (RuntimeException e) {
      driver.quit();
      throw e;
    }
  }

  /**
   * @return every request the page made so far, oldest first
   */
  List<Request> requests() {
    return List.copyOf(requests);
  }

  /**
   * @param url an absolute URL
   * @return the status of its last completed response, or null
   */
  Integer status(String url) {
    return statuses.get(url);
  }

  /**
   * Saves a screenshot of the window.
   *
   * @param file where
   * @throws UncheckedIOException if it cannot be written
   */
  void screenshot(Path file) {
    File shot = driver.getScreenshotAs(OutputType.FILE);
    try {
      Files.createDirectories(file.getParent());
      Files.copy(shot.toPath(), file, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Ends the browser and its driver. */
  @Override
  public void close() {
    try {
      network.close();
    } finally {
      driver.quit();
    }
  }
}
