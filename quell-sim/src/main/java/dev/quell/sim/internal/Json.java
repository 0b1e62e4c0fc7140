package dev.quell.sim.internal;

import dev.quell.internal.Internal;

/**
 * A small, strict JSON writer: objects, arrays, strings, numbers, booleans and null, with commas
 * placed by the writer. Non-finite numbers are written as null (JSON has no NaN or infinity).
 */
@Internal
public final class Json {
  private final StringBuilder out = new StringBuilder(4096);
  private final boolean[] first = new boolean[64];
  private int depth;
  private boolean afterName;

  /** Opens an object (as a value). */
  public Json beginObject() {
    value();
    out.append('{');
    push();
    return this;
  }

  /** Closes the current object. */
  public Json endObject() {
    depth--;
    out.append('}');
    return this;
  }

  /** Opens an array (as a value). */
  public Json beginArray() {
    value();
    out.append('[');
    push();
    return this;
  }

  /** Closes the current array. */
  public Json endArray() {
    depth--;
    out.append(']');
    return this;
  }

  /** Writes a member name; the next call writes its value. */
  public Json name(String name) {
    comma();
    string(name);
    out.append(':');
    afterName = true;
    return this;
  }

  /** A string value. */
  public Json value(String s) {
    value();
    string(s);
    return this;
  }

  /** A number value; NaN and infinities become null. */
  public Json value(double d) {
    value();
    out.append(Double.isFinite(d) ? Text.number(d) : "null");
    return this;
  }

  /** A whole-number value. */
  public Json value(long l) {
    value();
    out.append(l);
    return this;
  }

  /** A boolean value. */
  public Json value(boolean b) {
    value();
    out.append(b);
    return this;
  }

  /** A null value. */
  public Json nullValue() {
    value();
    out.append("null");
    return this;
  }

  /** A member with a string value. */
  public Json field(String name, String value) {
    return name(name).value(value);
  }

  /** A member with a number value. */
  public Json field(String name, double value) {
    return name(name).value(value);
  }

  /** A member with a whole-number value. */
  public Json field(String name, long value) {
    return name(name).value(value);
  }

  /** A member with a boolean value. */
  public Json field(String name, boolean value) {
    return name(name).value(value);
  }

  @Override
  public String toString() {
    return out.toString();
  }

  private void push() {
    first[++depth] = true;
  }

  private void value() {
    if (afterName) {
      afterName = false;
      return;
    }
    comma();
  }

  private void comma() {
    if (depth > 0) {
      if (first[depth]) {
        first[depth] = false;
      } else {
        out.append(',');
      }
    }
  }

  private void string(String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }
}
