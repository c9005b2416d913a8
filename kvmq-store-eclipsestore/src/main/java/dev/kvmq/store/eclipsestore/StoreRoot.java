package dev.kvmq.store.eclipsestore;

/**
 * The root of the persisted object graph: a format number, the latest versionstamp, and the
 * sentinel of the ring of {@link Node}s. Small: it is re-stored with every group commit.
 */
final class StoreRoot {

  /** The on-disk layout of this store; bumped when it changes. */
  static final int CURRENT_FORMAT = 1;

  int format;
  long versionstamp;
  Node sentinel;

  static StoreRoot empty() {
    StoreRoot root = new StoreRoot();
    root.format = CURRENT_FORMAT;
    // The sentinel carries an empty key and value, so that the first store of the root
    // registers every persisted type (StoreRoot, Node, byte[]) at once: the type dictionary
    // is then never rewritten later.
    Node s = new Node(Node.pack(new byte[0], new byte[0]), 0);
    s.prev = s;
    s.next = s;
    root.sentinel = s;
    return root;
  }
}
