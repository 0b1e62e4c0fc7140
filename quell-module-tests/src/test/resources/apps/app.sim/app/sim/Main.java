package app.sim;

import app.support.Friends;
import dev.quell.Resilience;
import dev.quell.sim.Dependency;
import dev.quell.sim.Load;
import dev.quell.sim.Simulate;
import dev.quell.sim.SimulationReport;
import java.time.Duration;

/** A short simulation: the simulator's clock implements the core's ConfinedTime, in dev.quell.internal. */
public final class Main {
  public static void main(String[] args) {
    Friends.check("dev.quell.sim", Simulate.class);
    SimulationReport report = Simulate.policy(Resilience.DEFAULT.withName("modpath"))
        .against(Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(50)))
        .under(Load.perSecond(50))
        .lasting(Duration.ofSeconds(10))
        .run(42);
    System.out.println("quell-sim on the module path: " + report.calls() + " calls simulated");
  }
}
