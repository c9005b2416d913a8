package dev.kvmq.it.queue;

import dev.kvmq.jakarta.JobCompleted;
import dev.kvmq.jakarta.JobFailed;
import dev.kvmq.jakarta.OnQueue;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.ObservesAsync;
import jakarta.inject.Inject;

/** Observes kvmq's CDI events, synchronously and asynchronously, into the {@link Recorder}. */
@ApplicationScoped
public class EventLog {

  @Inject Recorder recorder;

  void completed(@Observes JobCompleted e) {
    recorder.event(
        new Recorder.Seen("completed", false, e.queue(), e.job().id(), label(e.job().state())));
    if (label(e.job().state()).equals(OBSERVER_THROWS)) {
      throw new IllegalStateException("a synchronous observer that throws, on purpose");
    }
  }

  /** A job label whose synchronous completed observer throws. */
  static final String OBSERVER_THROWS = "event-observer-throws";

  void completedAsync(@ObservesAsync JobCompleted e) {
    recorder.event(
        new Recorder.Seen("completed", true, e.queue(), e.job().id(), label(e.job().state())));
  }

  void failed(@Observes JobFailed e) {
    recorder.event(
        new Recorder.Seen(
            e.dead() ? "failed-dead" : "failed",
            false,
            e.queue(),
            e.job().id(),
            label(e.job().state())));
  }

  void failedAsync(@ObservesAsync JobFailed e) {
    recorder.event(
        new Recorder.Seen(
            e.dead() ? "failed-dead" : "failed",
            true,
            e.queue(),
            e.job().id(),
            label(e.job().state())));
  }

  void flakyOnly(@Observes @OnQueue("flaky") JobFailed e) {
    recorder.filtered(e.queue());
  }

  private static String label(Object state) {
    return state instanceof Task t ? t.label() : String.valueOf(state);
  }
}
