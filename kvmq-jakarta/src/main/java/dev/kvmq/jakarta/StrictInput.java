package dev.kvmq.jakarta;

import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.bind.annotation.JsonbProperty;
import jakarta.json.bind.annotation.JsonbTypeAdapter;
import jakarta.json.bind.annotation.JsonbTypeDeserializer;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Finds what JSON-B changed silently in input it accepted. Yasson wraps a number that is out of
 * range of an {@code int} or {@code long} ({@code 2147483648} becomes {@code -2147483648}), cuts a
 * fraction off ({@code 1.5} becomes {@code 1}) and reads any string but {@code "true"} as {@code
 * false}. {@link JsonbCodec#read} compares the input with the state written back as JSON, leaf by
 * leaf where both have the same path, and refuses the input on the first difference found here.
 *
 * <p>Only these leaves are compared: an input number, string or boolean whose counterpart is a
 * number (its value must be the input's, exactly; a floating-point counterpart may be the input
 * rounded to {@code double} or {@code float}), and an input string or number whose counterpart is a
 * boolean (the input must be that boolean, in any case). Strings are not compared with strings, nor
 * is anything whose counterpart is a string, an object or an array, nor a null: a type may write a
 * property differently by design (an adapter, a write-only property, a normalised text).
 */
final class StrictInput {

  /** Comparisons at most in the search of a moved array element (a {@code Set}'s order). */
  static final int MAX_SEARCH = 1_000_000;

  private int searched;

  private StrictInput() {}

  /**
   * The first value of {@code input} that {@code output} does not keep.
   *
   * @param input the JSON that was read
   * @param output the state read from it, written back as JSON
   * @param type the state's type, to name the Java type in the reason when it can be found
   * @return {@code "path: reason"} ({@code "failTimes: 2147483648 is out of range of int"}; the
   *     reason alone at the top level), or empty if nothing changed
   */
  static Optional<String> changed(JsonValue input, JsonValue output, Type type) {
    return Optional.ofNullable(new StrictInput().compare(input, output, type, ""));
  }

  /**
   * Why JSON of {@code input}'s kind can't be the top level of {@code type}, for an input that
   * JSON-B refused: {@code "expected a JSON object, got a string"}.
   *
   * @return the reason, or empty when {@code type} is not an object or array type kvmq knows, or
   *     the kind fits
   */
  static Optional<String> wrongKind(JsonValue input, Type type) {
    Class<?> raw = raw(type);
    if (raw == null
        || raw.isAnnotationPresent(JsonbTypeAdapter.class)
        || raw.isAnnotationPresent(JsonbTypeDeserializer.class)) {
      return Optional.empty();
    }
    JsonValue.ValueType expected;
    if (raw.isArray() || Collection.class.isAssignableFrom(raw)) {
      expected = JsonValue.ValueType.ARRAY;
    } else if (Map.class.isAssignableFrom(raw) || isBean(raw)) {
      expected = JsonValue.ValueType.OBJECT;
    } else {
      return Optional.empty();
    }
    if (input.getValueType() == expected) {
      return Optional.empty();
    }
    return Optional.of(
        "expected a JSON "
            + (expected == JsonValue.ValueType.ARRAY ? "array" : "object")
            + ", got "
            + kind(input));
  }

  /** A class of the application's, read as a JSON object: not the JDK's, not JSON-P's. */
  private static boolean isBean(Class<?> c) {
    String n = c.getName();
    return !c.isPrimitive()
        && !c.isEnum()
        && !c.isInterface()
        && !n.startsWith("java.")
        && !n.startsWith("javax.")
        && !n.startsWith("jakarta.");
  }

  private static String kind(JsonValue v) {
    return switch (v.getValueType()) {
      case OBJECT -> "an object";
      case ARRAY -> "an array";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case TRUE, FALSE -> "a boolean";
      case NULL -> "null";
    };
  }

  private String compare(JsonValue in, JsonValue out, Type type, String path) {
    if (in instanceof JsonObject i && out instanceof JsonObject o) {
      for (Map.Entry<String, JsonValue> e : i.entrySet()) {
        JsonValue counterpart = o.get(e.getKey());
        if (counterpart != null) {
          String p = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
          String problem = compare(e.getValue(), counterpart, property(type, e.getKey()), p);
          if (problem != null) {
            return problem;
          }
        }
      }
      return null;
    }
    if (in instanceof JsonArray i && out instanceof JsonArray o) {
      Type element = element(type);
      for (int n = 0; n < i.size(); n++) {
        if (o.isEmpty()) {
          return null; // nothing to compare with
        }
        JsonValue counterpart = o.get(Math.min(n, o.size() - 1));
        String problem = compare(i.get(n), counterpart, element, path + "[" + n + "]");
        if (problem != null && !keptElsewhere(i.get(n), o, element)) {
          return problem;
        }
      }
      return null;
    }
    String reason = leaf(in, out, unwrap(type));
    return reason == null ? null : path.isEmpty() ? reason : path + ": " + reason;
  }

  /**
   * Whether some element of {@code out} keeps {@code in}: a {@code Set} writes its elements in its
   * own order, and drops duplicates.
   */
  private boolean keptElsewhere(JsonValue in, JsonArray out, Type element) {
    for (JsonValue o : out) {
      if (++searched > MAX_SEARCH) {
        return false;
      }
      if (compare(in, o, element, "") == null) {
        return true;
      }
    }
    return false;
  }

  /** Why {@code out} does not keep the scalar {@code in}, or null if it does or is not compared. */
  private static String leaf(JsonValue in, JsonValue out, Type type) {
    if (out instanceof JsonNumber o) {
      BigDecimal n;
      String shown;
      if (in instanceof JsonNumber i) {
        n = i.bigDecimalValue();
        shown = i.toString();
      } else if (in instanceof JsonString s) {
        shown = quoted(s);
        try {
          n = new BigDecimal(s.getString());
        } catch (NumberFormatException e) {
          return quoted(s) + " is not a number";
        }
      } else if (in.getValueType() == JsonValue.ValueType.TRUE
          || in.getValueType() == JsonValue.ValueType.FALSE) {
        return in + " is not a number";
      } else {
        return null;
      }
      return sameNumber(n, o) ? null : numberReason(n, shown, o, type);
    }
    if (out.getValueType() == JsonValue.ValueType.TRUE
        || out.getValueType() == JsonValue.ValueType.FALSE) {
      if (in.getValueType() == out.getValueType()) {
        return null;
      }
      if (in instanceof JsonString s && s.getString().equalsIgnoreCase(out.toString())) {
        return null;
      }
      if (in instanceof JsonString || in instanceof JsonNumber) {
        return (in instanceof JsonString s ? quoted(s) : in.toString()) + " is not true or false";
      }
    }
    return null;
  }

  private static boolean sameNumber(BigDecimal n, JsonNumber out) {
    BigDecimal m = out.bigDecimalValue();
    if (n.compareTo(m) == 0) {
      return true;
    }
    // a double or float is the input rounded to the nearest one: JSON numbers are read so
    String text = out.toString();
    boolean floating = text.indexOf('.') >= 0 || text.indexOf('e') >= 0 || text.indexOf('E') >= 0;
    return floating
        && (n.doubleValue() == m.doubleValue()
            || (n.floatValue() == m.floatValue() && !Float.isInfinite(n.floatValue())));
  }

  private static String numberReason(BigDecimal n, String shown, JsonNumber out, Type type) {
    if (n.stripTrailingZeros().scale() > 0 && out.isIntegral()) {
      return shown + " is not a whole number";
    }
    String integer = integerName(type);
    if (integer != null) {
      return shown + " is out of range of " + integer;
    }
    return shown + " does not fit the property's type (it would be stored as " + out + ")";
  }

  private static String quoted(JsonString s) {
    String t = s.toString();
    return t.length() <= 60 ? t : t.substring(0, 57) + "...\"";
  }

  private static String integerName(Type type) {
    Class<?> c = raw(type);
    if (c == int.class || c == Integer.class || c == OptionalInt.class) {
      return "int";
    }
    if (c == long.class || c == Long.class || c == OptionalLong.class) {
      return "long";
    }
    if (c == short.class || c == Short.class) {
      return "short";
    }
    if (c == byte.class || c == Byte.class) {
      return "byte";
    }
    return null;
  }

  /** The type of a property of {@code type}, found by field name; null when not found. */
  private static Type property(Type type, String name) {
    type = unwrap(type);
    Class<?> raw = raw(type);
    if (raw == null) {
      return null;
    }
    if (Map.class.isAssignableFrom(raw)) {
      return type instanceof ParameterizedType p && p.getActualTypeArguments().length == 2
          ? p.getActualTypeArguments()[1]
          : null;
    }
    for (Class<?> c = raw; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        JsonbProperty renamed = f.getAnnotation(JsonbProperty.class);
        boolean named =
            renamed != null && !renamed.value().isEmpty()
                ? renamed.value().equals(name)
                : f.getName().equals(name);
        if (named) {
          return f.getGenericType();
        }
      }
    }
    return null;
  }

  /** The element type of an array or collection type; null when not known. */
  private static Type element(Type type) {
    type = unwrap(type);
    if (type instanceof Class<?> c && c.isArray()) {
      return c.getComponentType();
    }
    if (type instanceof GenericArrayType g) {
      return g.getGenericComponentType();
    }
    Class<?> raw = raw(type);
    if (raw != null
        && Collection.class.isAssignableFrom(raw)
        && type instanceof ParameterizedType p
        && p.getActualTypeArguments().length == 1) {
      return p.getActualTypeArguments()[0];
    }
    return null;
  }

  /** {@code Optional<X>} as {@code X}: JSON-B writes the value itself. */
  private static Type unwrap(Type type) {
    if (type instanceof ParameterizedType p && p.getRawType() == Optional.class) {
      return p.getActualTypeArguments()[0];
    }
    return type;
  }

  private static Class<?> raw(Type type) {
    if (type instanceof Class<?> c) {
      return c;
    }
    if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> c) {
      return c;
    }
    return null;
  }
}
