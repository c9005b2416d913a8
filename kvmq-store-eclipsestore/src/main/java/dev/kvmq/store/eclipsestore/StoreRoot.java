package dev.kvmq.store.eclipsestore;

/**
 * The root of the persisted object graph: a format number, the latest versionstamp, and the
 * sentinels of {@value #RINGS} rings of {@link Page}s. Small: it is re-stored with every group
 * commit; the array of sentinels is written once, when the store is created.
 *
 * <p>Why many rings and not one: EclipseStore loads an object graph breadth first, one round trip
 * to its storage thread per level of references. One ring of pages would be as many levels as
 * pages; {@value #RINGS} rings make it pages / {@value #RINGS} levels.
 */
final class StoreRoot {

  /**
   * The on-disk layout of this store; bumped when it changes. 1 was a node per key (never
   * released); 2 is pages of packed entries.
   */
  static final int CURRENT_FORMAT = 2;

  /** The number of rings; a power of two. */
  static final int RINGS = 4096;

  int format;
  long versionstamp;
  Page[] rings;

  static StoreRoot empty() {
    StoreRoot root = new StoreRoot();
    root.format = CURRENT_FORMAT;
    root.rings = new Page[RINGS];
    // The sentinels carry an empty array (one shared), so that the first store of the root
    // registers every persisted type (StoreRoot, Page[], Page, byte[]) at once: the type
    // dictionary is then never rewritten later.
    byte[] empty = new byte[0];
    for (int i = 0; i < RINGS; i++) {
      Page s = new Page(empty);
      s.prev = s;
      s.next = s;
      root.rings[i] = s;
    }
    return root;
  }
}
