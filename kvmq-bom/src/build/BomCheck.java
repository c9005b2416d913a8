import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Fails the build when kvmq-bom and the published modules disagree. Run by kvmq-bom's build
 * (exec-maven-plugin, phase verify) as a single-file program: {@code java BomCheck.java ROOT
 * FLATTENED_BOM}.
 *
 * <p>A module is published unless its pom sets {@code maven.deploy.skip} to {@code true}; a
 * published jar module must be in the BOM, and so must its test jar when its pom builds one
 * (the {@code test-jar} goal). Every BOM entry must be such an artifact, at {@code
 * ${project.version}}. The flattened BOM (what is deployed) must have no parent and list only
 * kvmq artifacts, at the reactor's version, with the parent's license.
 */
public class BomCheck {

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]).toRealPath();
    Path flattened = Path.of(args[1]);
    List<String> problems = new ArrayList<>();

    Element rootPom = read(root.resolve("pom.xml"));
    String groupId = text(rootPom, "groupId");
    String version = text(rootPom, "version");

    Set<String> expected = new TreeSet<>();
    Set<String> unpublished = new TreeSet<>();
    for (Element module : children(child(rootPom, "modules"), "module")) {
      String dir = module.getTextContent().trim();
      Element pom = read(root.resolve(dir).resolve("pom.xml"));
      String artifactId = text(pom, "artifactId");
      String packaging = text(pom, "packaging");
      Element properties = child(pom, "properties");
      boolean skip =
          properties != null && "true".equals(text(properties, "maven.deploy.skip"));
      if (skip) {
        unpublished.add(artifactId);
        continue;
      }
      if (packaging != null && !packaging.equals("jar")) {
        continue; // the BOM itself, or another pom-only module
      }
      expected.add(artifactId + ":jar");
      if (buildsTestJar(pom)) {
        expected.add(artifactId + ":test-jar");
      }
    }

    Element bom = read(root.resolve("kvmq-bom/pom.xml"));
    Set<String> listed = new TreeSet<>();
    for (Element dep : managed(bom)) {
      String id = text(dep, "artifactId") + ":" + typeOf(dep);
      if (!listed.add(id)) {
        problems.add("kvmq-bom lists " + id + " twice");
      }
      if (!groupId.equals(text(dep, "groupId"))) {
        problems.add("kvmq-bom lists " + id + " with groupId " + text(dep, "groupId"));
      }
      if (!"${project.version}".equals(text(dep, "version"))) {
        problems.add(
            "kvmq-bom lists " + id + " at " + text(dep, "version") + ", not ${project.version}");
      }
    }
    for (String id : expected) {
      if (!listed.contains(id)) {
        problems.add(
            "kvmq-bom does not list " + id + ", which is published (its pom does not set"
                + " maven.deploy.skip=true): add it to kvmq-bom/pom.xml or skip its deploy");
      }
    }
    for (String id : listed) {
      if (!expected.contains(id)) {
        String artifactId = id.substring(0, id.indexOf(':'));
        problems.add(
            "kvmq-bom lists " + id + ", which "
                + (unpublished.contains(artifactId)
                    ? "is not published (maven.deploy.skip=true)"
                    : "no module of the reactor builds")
                + ": remove it from kvmq-bom/pom.xml");
      }
    }

    if (!Files.exists(flattened)) {
      problems.add("no flattened BOM at " + flattened + " (flatten-maven-plugin did not run)");
    } else {
      Element flat = read(flattened);
      if (child(flat, "parent") != null) {
        problems.add("the flattened BOM still names a parent: users would import its"
            + " dependencyManagement too");
      }
      if (!version.equals(text(flat, "version"))) {
        problems.add("the flattened BOM's version is " + text(flat, "version") + ", not "
            + version);
      }
      Set<String> flatListed = new TreeSet<>();
      for (Element dep : managed(flat)) {
        String id = text(dep, "artifactId") + ":" + typeOf(dep);
        flatListed.add(id);
        String v = text(dep, "version");
        if (!groupId.equals(text(dep, "groupId"))) {
          problems.add("the flattened BOM manages " + text(dep, "groupId") + ":" + id
              + ", which is not a kvmq artifact");
        } else if (!version.equals(v) && !"${project.version}".equals(v)) {
          problems.add("the flattened BOM has " + id + " at " + v);
        }
      }
      if (!flatListed.equals(listed)) {
        problems.add("the flattened BOM lists " + flatListed + ", kvmq-bom/pom.xml " + listed);
      }
      Element licenses = child(flat, "licenses");
      if (licenses == null || children(licenses, "license").isEmpty()) {
        problems.add("the flattened BOM carries no license");
      }
    }

    if (!problems.isEmpty()) {
      problems.forEach(p -> System.err.println("BomCheck: " + p));
      System.exit(1);
    }
    System.out.println(
        "BomCheck: kvmq-bom lists the " + expected.size() + " published artifacts " + expected
            + "; not published: " + unpublished);
  }

  private static boolean buildsTestJar(Element pom) {
    for (Element plugin : children(child(child(pom, "build"), "plugins"), "plugin")) {
      if ("maven-jar-plugin".equals(text(plugin, "artifactId"))) {
        for (Element goal : elements(plugin.getElementsByTagName("goal"))) {
          if (goal.getTextContent().trim().equals("test-jar")) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private static List<Element> managed(Element pom) {
    Element dm = child(pom, "dependencyManagement");
    return dm == null ? List.of() : children(child(dm, "dependencies"), "dependency");
  }

  private static String typeOf(Element dep) {
    String type = text(dep, "type");
    return type == null ? "jar" : type;
  }

  private static Element read(Path pom) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Document doc = f.newDocumentBuilder().parse(pom.toFile());
    return doc.getDocumentElement();
  }

  private static Element child(Element parent, String name) {
    if (parent == null) {
      return null;
    }
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        return e;
      }
    }
    return null;
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> result = new ArrayList<>();
    if (parent != null) {
      for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
        if (n instanceof Element e && e.getTagName().equals(name)) {
          result.add(e);
        }
      }
    }
    return result;
  }

  private static List<Element> elements(org.w3c.dom.NodeList list) {
    List<Element> result = new ArrayList<>();
    for (int i = 0; i < list.getLength(); i++) {
      result.add((Element) list.item(i));
    }
    return result;
  }

  private static String text(Element parent, String name) {
    Element e = child(parent, name);
    return e == null ? null : e.getTextContent().trim();
  }
}
