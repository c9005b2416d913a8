package dev.kvmq.store.eclipsestore;

/**
 * The root of the persisted object graph: a format number, the latest versionstamp, and the
 * sentinels of {@value #RINGS} rings of {@link Node}s. Small: it is re-stored with every
 * group commit; the array of sentinels is written once, when the store is created.
 *
 * <p>Why many rings and not one: EclipseStore loads an object graph breadth first, one
 * round trip to its storage thread per level of references. One ring of a million nodes
 * would be a million levels (22 s to open, measured); {@value #RINGS} rings make it a
 * million / {@value #RINGS} levels of {@value #RINGS} nodes each.
 */
final class StoreRoot {

  /** The on-disk layout of this store; bumped when it changes. */
  static final int CURRENT_FORMAT = 1;

  /** The number of rings; a power of two. */
  static final int RINGS = 4096;

  int format;
  long versionstamp;
  Node[] rings;

  static StoreRoot empty() {
    StoreRoot root = new StoreRoot();
    root.format = CURRENT_FORMAT;
    root.rings = new Node[RINGS];
    // The sentinels carry an empty key and value (one shared array), so that the first store
    // of the root registers every persisted type (StoreRoot, Node[], Node, byte[]) at once:
    // the type dictionary is then never rewritten later.
    byte[] empty = Node.pack(new byte[0], new byte[0]);
    for (int i = 0; i < RINGS; i++) {
      Node s = new Node(empty, 0);
      s.prev = s;
      s.next = s;
      root.rings[i] = s;
    }
    return root;
  }
}
