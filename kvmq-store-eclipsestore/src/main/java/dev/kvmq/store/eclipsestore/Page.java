package dev.kvmq.store.eclipsestore;

import java.util.ArrayList;

/**
 * A page of key-value entries as persisted: one byte array holding up to about {@link
 * EclipseStoreKvStore.Builder#pageBytes page size} bytes of packed entries (see {@link Entry} for
 * the layout of one), and the links of the ring of pages it belongs to (one of the {@value
 * StoreRoot#RINGS} rings that start and end at a sentinel page of {@link StoreRoot#rings}).
 *
 * <p>A commit that changes entries of a page writes the page again: its new byte array and the page
 * object (three references). Adding or removing a page re-stores its two ring neighbours (their
 * links changed, not their arrays). So a commit writes at most a page and a few small objects per
 * key it changes, whatever the number of keys, and opening a store loads two objects per page
 * instead of two per key. Pages have no order: the key order lives in the heap index that the store
 * rebuilds at start.
 *
 * <p>A plain class, not a record: EclipseStore stores plain classes without JVM flags. The {@code
 * transient} fields are heap-only bookkeeping that EclipseStore does not persist; they are set when
 * the store opens.
 */
final class Page {

  /** Packed entries, one after the other; an empty array for a sentinel. */
  byte[] data;

  Page prev;
  Page next;

  /** The entries that live in this page, in {@link #data} order once written. */
  transient ArrayList<Entry> entries;

  /** Sum of the packed sizes of {@link #entries}: the length of the next {@link #data}. */
  transient int bytes;

  /** True while the page has changes not yet written in this group commit. */
  transient boolean dirty;

  /** True once the page has no entries and was unlinked from its ring. */
  transient boolean dead;

  /** True while the page is in the store's list of pages with room. */
  transient boolean roomy;

  Page(byte[] data) {
    this.data = data;
    initHeap();
  }

  /** Sets the heap-only fields (after a load, EclipseStore leaves them at their defaults). */
  void initHeap() {
    entries = new ArrayList<>();
    bytes = 0;
  }

  /** Packs the current entries into a new {@link #data} array and points them at it. */
  void rewrite() {
    byte[] d = new byte[bytes];
    int pos = 0;
    for (Entry e : entries) {
      int size = e.size();
      System.arraycopy(e.buf, e.off, d, pos, size);
      e.buf = d;
      e.off = pos;
      pos += size;
    }
    if (pos != bytes) {
      throw new IllegalStateException("page size bookkeeping is off: " + pos + " != " + bytes);
    }
    data = d;
  }
}
