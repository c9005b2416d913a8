package dev.kvmq.it.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPInputStream;

/**
 * A tiny OTLP/HTTP receiver in the test JVM ({@code http/protobuf}, on 127.0.0.1 and a free port):
 * takes {@code POST /v1/traces} and {@code /v1/metrics}, answers 200 with an empty response, and
 * keeps the spans and metrics it decoded. The decoding reads the protobuf wire format by field
 * number (opentelemetry-proto's {@code trace.proto} and {@code metrics.proto}), only the fields the
 * tests look at.
 */
public final class OtlpReceiver implements AutoCloseable {

  /** A span as exported: ids in lowercase hex, kind as the proto's number (5 = CONSUMER). */
  public record Span(
      String traceId,
      String spanId,
      String parentSpanId,
      String name,
      int kind,
      Map<String, Object> attributes) {}

  /** One data point of a metric: its attributes and, for sums and gauges, its value. */
  public record Point(Map<String, Object> attributes, Long value, Long count) {}

  /** A metric as exported: name, unit, and its points. */
  public record Metric(String name, String unit, List<Point> points) {}

  private final HttpServer server;
  private final List<Span> spans = new CopyOnWriteArrayList<>();
  private final List<Metric> metrics = new CopyOnWriteArrayList<>();
  private final List<String> errors = new CopyOnWriteArrayList<>();

  /**
   * Starts the receiver.
   *
   * @throws IOException if no port can be bound
   */
  public OtlpReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/v1/traces", e -> take(e, true));
    server.createContext("/v1/metrics", e -> take(e, false));
    server.createContext("/", e -> answer(e, 404));
    server.start();
  }

  /**
   * @return the base URL, e.g. {@code http://127.0.0.1:40123}
   */
  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /**
   * @return every span received so far
   */
  public List<Span> spans() {
    return List.copyOf(spans);
  }

  /**
   * @return the metrics of the latest export that had each name
   */
  public Map<String, Metric> metrics() {
    Map<String, Metric> latest = new LinkedHashMap<>();
    for (Metric m : metrics) {
      latest.put(m.name(), m);
    }
    return latest;
  }

  /**
   * @return what could not be decoded (empty if all went well)
   */
  public List<String> errors() {
    return List.copyOf(errors);
  }

  private void take(HttpExchange e, boolean traces) throws IOException {
    try (InputStream raw = e.getRequestBody()) {
      InputStream in =
          "gzip".equalsIgnoreCase(e.getRequestHeaders().getFirst("Content-Encoding"))
              ? new GZIPInputStream(raw)
              : raw;
      byte[] body = in.readAllBytes();
      if (traces) {
        traces(body);
      } else {
        metrics(body);
      }
      answer(e, 200);
    } catch (RuntimeException ex) {
      errors.add(ex.toString());
      answer(e, 400);
    }
  }

  private static void answer(HttpExchange e, int status) throws IOException {
    e.getResponseHeaders().add("Content-Type", "application/x-protobuf");
    e.sendResponseHeaders(status, -1);
    e.close();
  }

  // ExportTraceServiceRequest: 1 resource_spans; ResourceSpans: 2 scope_spans; ScopeSpans: 2 spans
  private void traces(byte[] body) {
    for (byte[] rs : Fields.of(body).bytes(1)) {
      for (byte[] ss : Fields.of(rs).bytes(2)) {
        for (byte[] s : Fields.of(ss).bytes(2)) {
          Fields f = Fields.of(s);
          spans.add(
              new Span(
                  hex(f.first(1)),
                  hex(f.first(2)),
                  hex(f.first(4)),
                  text(f.first(5)),
                  (int) f.number(6),
                  attributes(f.bytes(9))));
        }
      }
    }
  }

  // ExportMetricsServiceRequest: 1 resource_metrics; ResourceMetrics: 2 scope_metrics;
  // ScopeMetrics: 2 metrics; Metric: 1 name, 3 unit, 5 gauge, 7 sum, 9 histogram (each: 1 points)
  private void metrics(byte[] body) {
    for (byte[] rm : Fields.of(body).bytes(1)) {
      for (byte[] sm : Fields.of(rm).bytes(2)) {
        for (byte[] m : Fields.of(sm).bytes(2)) {
          Fields f = Fields.of(m);
          List<Point> points = new ArrayList<>();
          for (int data : new int[] {5, 7}) {
            for (byte[] d : f.bytes(data)) {
              // NumberDataPoint: 7 attributes, 4 as_double (fixed64), 6 as_int (sfixed64)
              for (byte[] p : Fields.of(d).bytes(1)) {
                Fields pf = Fields.of(p);
                Long v = pf.has(6) ? pf.number(6) : null;
                points.add(new Point(attributes(pf.bytes(7)), v, null));
              }
            }
          }
          for (byte[] h : f.bytes(9)) {
            // HistogramDataPoint: 9 attributes, 4 count (fixed64)
            for (byte[] p : Fields.of(h).bytes(1)) {
              Fields pf = Fields.of(p);
              points.add(new Point(attributes(pf.bytes(9)), null, pf.number(4)));
            }
          }
          metrics.add(new Metric(text(f.first(1)), text(f.first(3)), points));
        }
      }
    }
  }

  // KeyValue: 1 key, 2 AnyValue (1 string, 2 bool, 3 int, 4 double)
  private static Map<String, Object> attributes(List<byte[]> keyValues) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (byte[] kv : keyValues) {
      Fields f = Fields.of(kv);
      Fields v = Fields.of(f.first(2));
      Object value =
          v.has(1)
              ? text(v.first(1))
              : v.has(3) ? (Object) v.number(3) : v.has(2) ? v.number(2) != 0 : null;
      out.put(text(f.first(1)), value);
    }
    return out;
  }

  private static String hex(byte[] b) {
    return b == null ? "" : HexFormat.of().formatHex(b);
  }

  private static String text(byte[] b) {
    return b == null ? "" : new String(b, StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    server.stop(0);
  }

  /** The fields of one protobuf message by number: length-delimited as bytes, others as longs. */
  private static final class Fields {
    private final Map<Integer, List<Object>> values = new LinkedHashMap<>();

    static Fields of(byte[] message) {
      Fields f = new Fields();
      if (message == null) {
        return f;
      }
      ByteArrayInputStream in = new ByteArrayInputStream(message);
      while (in.available() > 0) {
        long key = varint(in);
        int number = (int) (key >>> 3);
        Object value =
            switch ((int) (key & 7)) {
              case 0 -> varint(in);
              case 1 -> fixed(in, 8);
              case 2 -> read(in, (int) varint(in));
              case 5 -> fixed(in, 4);
              default -> throw new IllegalArgumentException("wire type " + (key & 7));
            };
        f.values.computeIfAbsent(number, n -> new ArrayList<>()).add(value);
      }
      return f;
    }

    boolean has(int number) {
      return values.containsKey(number);
    }

    List<byte[]> bytes(int number) {
      List<byte[]> out = new ArrayList<>();
      for (Object o : values.getOrDefault(number, List.of())) {
        out.add((byte[]) o);
      }
      return out;
    }

    byte[] first(int number) {
      List<byte[]> all = bytes(number);
      return all.isEmpty() ? null : all.get(0);
    }

    long number(int number) {
      List<Object> all = values.getOrDefault(number, List.of());
      return all.isEmpty() ? 0 : (Long) all.get(0);
    }

    private static long varint(ByteArrayInputStream in) {
      long result = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        int b = in.read();
        if (b < 0) {
          throw new IllegalArgumentException("truncated varint");
        }
        result |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return result;
        }
      }
      throw new IllegalArgumentException("varint too long");
    }

    private static long fixed(ByteArrayInputStream in, int size) {
      byte[] b = read(in, size);
      long v = 0;
      for (int i = size - 1; i >= 0; i--) {
        v = (v << 8) | (b[i] & 0xff);
      }
      return v;
    }

    private static byte[] read(ByteArrayInputStream in, int size) {
      try {
        byte[] b = in.readNBytes(size);
        if (b.length != size) {
          throw new IllegalArgumentException("truncated field");
        }
        return b;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
