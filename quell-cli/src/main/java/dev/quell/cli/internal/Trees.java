package dev.quell.cli.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Deep copies of YAML trees: nested maps, lists and scalars. */
final class Trees {
  private Trees() {}

  @SuppressWarnings("unchecked")
  static Map<String, Object> copy(Map<String, Object> map) {
    return (Map<String, Object>) java.util.Objects.requireNonNull(copyValue(map)); // a map copies to a map
  }

  static @Nullable Object copyValue(@Nullable Object value) {
    if (value instanceof Map) {
      Map<Object, Object> copy = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        copy.put(e.getKey(), copyValue(e.getValue()));
      }
      return copy;
    }
    if (value instanceof List) {
      List<Object> copy = new ArrayList<>();
      for (Object o : (List<?>) value) {
        copy.add(copyValue(o));
      }
      return copy;
    }
    return value;
  }
}
