package dev.quell.internal;

/**
 * A time source whose calls are confined to one thread: the thread that runs its events is the one
 * that starts every call on it, completes their attempts and feeds them every other input. The
 * simulator's clock is one: its loop runs everything inline, on the thread that owns it.
 *
 * <p>For a call on such a time source the core takes no lock for the inputs that come on the owner
 * thread, as nothing can run beside them. An input from another thread still takes the call's lock,
 * but nothing stops it from racing with the owner's: there must be none.
 */
@Internal
public interface ConfinedTime {

  /** The one thread that drives the calls on this time source. */
  Thread owner();
}
