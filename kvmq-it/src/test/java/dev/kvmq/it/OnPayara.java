package dev.kvmq.it;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class whose {@code @Deployment} runs on a real Payara Micro, started by Arquillian
 * (see {@code arquillian.xml}) for that class and stopped after it.
 *
 * <p>Like the Jakarta Concurrency TCK's {@code @Web}: one annotation carries the JUnit extension
 * and the tag, so that {@code -Dgroups=payara} (or {@code excludedGroups}) selects these tests. A
 * WAR that runs tests inside the server must carry this annotation's class (see {@link
 * Wars#testWar}): where it cannot be loaded, JUnit drops it silently and the test runs without
 * Arquillian, its {@code @Inject} fields empty. Each deployment costs one Payara start (15-20 s
 * here), so group checks into few deployments.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Tag("payara")
@ExtendWith(ArquillianExtension.class)
public @interface OnPayara {}
