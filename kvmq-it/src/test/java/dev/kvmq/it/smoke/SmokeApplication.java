package dev.kvmq.it.smoke;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The smoke WAR's JAX-RS application, below {@code /api}. */
@ApplicationPath("api")
public class SmokeApplication extends Application {}
