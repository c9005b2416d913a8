package dev.kvmq.it.support.traced;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The traced test application's own JAX-RS application, at {@code /api}. */
@ApplicationPath("/api")
public class TracedApi extends Application {}
