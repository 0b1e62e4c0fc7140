package dev.quell.sim;

import dev.quell.Outcome;
import dev.quell.ResilienceContext;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/** A service while a run goes on: answers each request by calling its downstream edges in turn. */
final class ServiceNode extends Node {
  final List<Edge> edges = new ArrayList<>();
  private final CompletionException upstream;
  private int inFlight;
  long answered;
  long failedRequests;

  ServiceNode(Engine engine, Service service) {
    super(engine, service);
    this.upstream = Reply.wrap(new SimulatedFailure(SimulatedFailure.Kind.UPSTREAM, name));
  }

  @Override
  void submit(Reply reply, int second, int phase) {
    long now = engine.clock.nanoTime();
    arrived(second, phase);
    inFlight++;
    occupancy.set(now, inFlight);
    // the caller's attempt context (its deadline and criticality) is current while an attempt starts:
    // keep it for the downstream calls that start later, from the event loop
    new Request(reply, ResilienceContext.current()).next();
  }

  private void done(Reply reply, boolean ok) {
    inFlight--;
    occupancy.set(engine.clock.nanoTime(), inFlight);
    if (ok) {
      answered++;
      reply.succeed();
    } else {
      failedRequests++;
      reply.fail(upstream);
    }
  }

  @Override
  NodeReport report(long entryCalls, long[] entryCallsPerPhase, long[] entryOfferedPerSecond) {
    return new NodeReport(name, NodeReport.Kind.SERVICE, received, paths, entryCalls, receivedPerPhase,
        entryCallsPerPhase, entryOfferedPerSecond, receivedPerSecond, OptionalInt.empty(), occupancy.peak(), occupancy.mean(), 0, 0, 0,
        answered, failedRequests);
  }

  /** One request: which downstream call is next. */
  private final class Request implements Consumer<Outcome<Object>> {
    private final Reply reply;
    private final ResilienceContext context;
    private int index;

    Request(Reply reply, ResilienceContext context) {
      this.reply = reply;
      this.context = context;
    }

    void next() {
      if (index == edges.size()) {
        done(reply, true);
        return;
      }
      edges.get(index++).call(context, this);
    }

    @Override
    public void accept(Outcome<Object> outcome) {
      if (outcome.isSuccess()) {
        next();
      } else {
        done(reply, false);
      }
    }
  }
}
