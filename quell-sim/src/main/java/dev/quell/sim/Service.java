package dev.quell.sim;

import dev.quell.Resilience;
import dev.quell.TimeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A service in a simulated topology: to answer one request it calls its downstream targets one after
 * another, each under a policy of its own, and answers with a transient failure (as an HTTP 503
 * would) as soon as one of those calls fails. A service does no work of its own and has no capacity
 * limit; put the limits on the {@link Dependency dependencies} at the leaves.
 *
 * <pre>{@code
 * Resilience fourAttempts = Resilience.DEFAULT.withAttempts(4);
 * Service backend = Service.named("backend").calls(database, fourAttempts);
 * Service frontend = Service.named("frontend").calls(backend, fourAttempts);
 * Simulate.policy(fourAttempts).against(frontend).under(Load.perSecond(100)).run(1);
 * }</pre>
 *
 * <p>Each edge gets its own copy of its policy, and so its own automatic budget, as a separate
 * process would. A request runs its downstream calls inside the attempt's {@code ResilienceContext},
 * so the caller's deadline and criticality travel down (policies honour the ambient deadline unless
 * told otherwise). A request whose caller has given up keeps running, as it would in production.
 *
 * <p>Immutable: {@link #calls} returns a changed copy.
 */
public final class Service implements Target {
  private final String name;
  private final List<Downstream> downstream;

  /** One downstream call a service makes for each request: where to, and under which policy. */
  public static final class Downstream {
    private final Target target;
    private final PolicySource policy;

    Downstream(Target target, PolicySource policy) {
      this.target = target;
      this.policy = policy;
    }

    /** Where the call goes. */
    public Target target() {
      return target;
    }

    PolicySource policy() {
      return policy;
    }

    @Override
    public String toString() {
      return "→ " + target.name() + " under " + policy;
    }
  }

  private Service(String name, List<Downstream> downstream) {
    this.name = name;
    this.downstream = List.copyOf(downstream);
  }

  /** A service called {@code name} that calls nothing yet (it answers every request at once). */
  public static Service named(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("service name must not be blank");
    }
    return new Service(name, List.of());
  }

  /**
   * A copy that, for each request, also calls {@code target} under {@code policy} (after the calls
   * added before). The policy's budget must be {@code AUTOMATIC} or {@code NONE}; see
   * {@link Simulate#policy(Resilience)}.
   */
  public Service calls(Target target, Resilience policy) {
    return with(new Downstream(Objects.requireNonNull(target, "target"), PolicySource.of(policy)));
  }

  /**
   * A copy that also calls {@code target} under the policy {@code factory} builds on the
   * simulation's clock, once per run; see {@link Simulate#policy(Function)}.
   */
  public Service calls(Target target, Function<? super TimeSource, Resilience> factory) {
    return with(new Downstream(Objects.requireNonNull(target, "target"), PolicySource.of(factory)));
  }

  private Service with(Downstream d) {
    List<Downstream> more = new ArrayList<>(downstream);
    more.add(d);
    return new Service(name, more);
  }

  @Override
  public String name() {
    return name;
  }

  /** The calls this service makes for each request, in order. */
  public List<Downstream> downstream() {
    return downstream;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Service)) {
      return false;
    }
    Service s = (Service) o;
    if (!s.name.equals(name) || s.downstream.size() != downstream.size()) {
      return false;
    }
    for (int i = 0; i < downstream.size(); i++) {
      Downstream a = downstream.get(i);
      Downstream b = s.downstream.get(i);
      if (!a.target.equals(b.target) || a.policy != b.policy) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = name.hashCode();
    for (Downstream d : downstream) {
      h = 31 * h + d.target.hashCode();
    }
    return h;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(name);
    for (Downstream d : downstream) {
      s.append(' ').append(d);
    }
    return s.toString();
  }
}
