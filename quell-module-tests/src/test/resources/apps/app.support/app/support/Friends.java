package app.support;

/** The friend export that a wrong module name breaks, checked before the call that needs it. */
public final class Friends {
  private Friends() {}

  /**
   * Fails unless {@code type} lives in the module named {@code name} and quell-core, resolved in the
   * same layer, exports {@code dev.quell.internal} to it: a module that names itself otherwise (an
   * Automatic-Module-Name left at the parent's dev.quell.parent) is not one of the core's friends, and
   * its first touch of dev.quell.internal throws IllegalAccessError.
   */
  public static void check(String name, Class<?> type) {
    Module module = type.getModule();
    if (!name.equals(module.getName())) {
      throw new AssertionError(type.getName() + " is in module " + module.getName() + ", not " + name);
    }
    Module core = module.getLayer().findModule("dev.quell")
        .orElseThrow(() -> new AssertionError("dev.quell, quell-core, is not resolved"));
    if (!core.isExported("dev.quell.internal", module)) {
      throw new AssertionError("quell-core does not export dev.quell.internal to " + name);
    }
  }
}
