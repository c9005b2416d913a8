package dev.kvmq;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the one sanctioned use of an API the kernel's forbidden-apis check bans (the system clock
 * as the default when none is injected). Each use says why.
 */
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.METHOD, ElementType.TYPE, ElementType.FIELD})
@interface SuppressForbidden {
  /** Why this use is allowed. */
  String reason();
}
