package dev.kvmq.store.eclipsestore;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KeyRange;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStoreException;
import java.nio.file.Path;
import java.util.AbstractSet;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableSet;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The map in the heap and its pages: the key index (a {@link TreeSet} of {@link Entry}s in key
 * order, and a {@link KeyTable} of the same entries for point lookups) and the persisted {@link
 * Page}s the entries live in, with the rules that decide which page an entry goes to (see {@code
 * docs/embedded-store.md}, "The data structure").
 *
 * <p><b>Locking.</b> Not thread-safe by itself; the store guards it with its read-write lock. Reads
 * ({@link #find}, {@link #range}, {@link #size}, {@link #pageCount}) run under the read lock, from
 * any thread. Changes ({@link #checksHold} and {@link #apply} within a {@link #startBatch}/{@link
 * #finishBatch} pair) run on the committer thread only, under the write lock; the fields that only
 * changes touch ({@code fill}, {@code roomy}, {@code nextRing}, {@code changedPages}, {@code
 * dirty}) are the committer thread's.
 */
final class PageMap {

  private static final Comparator<Entry> KEY_ORDER = Entry::compareKeys;

  private final Path directory;
  private final StoreRoot root;

  /** The packed size a page is filled up to. */
  private final int pageBytes;

  /** Key order. */
  private NavigableSet<Entry> index = new TreeSet<>(KEY_ORDER);

  /** The same entries by key, for point lookups: {@link #find} without walking the tree. */
  private KeyTable table = new KeyTable();

  /** The ring the next new page goes to. */
  private int nextRing;

  /** The page new keys go to while it has room. */
  private Page fill;

  /** Pages under half full, to be filled again (some may have filled up or died since). */
  private final ArrayDeque<Page> roomy = new ArrayDeque<>();

  /** Pages changed by the group commit being applied. */
  private final List<Page> changedPages = new ArrayList<>();

  /** Objects to store for the group commit being applied. */
  private final Set<Object> dirty = Collections.newSetFromMap(new IdentityHashMap<>());

  /**
   * Loads the map from the pages of {@code root}.
   *
   * @throws KvStoreException if the pages are damaged
   */
  PageMap(StoreRoot root, int pageBytes, Path directory) {
    this.root = root;
    this.pageBytes = pageBytes;
    this.directory = directory;
    rebuild();
  }

  /**
   * Walks the rings of pages, unpacks their entries and builds the key index: the entries are
   * sorted once and the index is built from the sorted run in linear time.
   */
  private void rebuild() {
    if (root.rings == null || root.rings.length != StoreRoot.RINGS) {
      throw new KvStoreException(
          "storage directory " + directory + " is damaged: the rings of pages are missing");
    }
    List<Entry> all = new ArrayList<>();
    for (Page s : root.rings) {
      if (s == null) {
        throw new KvStoreException(
            "storage directory " + directory + " is damaged: a ring sentinel is missing");
      }
      s.initHeap();
      for (Page p = s.next; p != s; p = p.next) {
        if (p == null || p.next == null || p.next.prev != p || p.data == null) {
          throw new KvStoreException(
              "storage directory " + directory + " is damaged: broken link in a page ring");
        }
        p.initHeap();
        byte[] d = p.data;
        int pos = 0;
        while (pos < d.length) {
          int size = Entry.sizeAt(d, pos);
          if (size < 0) {
            throw new KvStoreException(
                "storage directory " + directory + " is damaged: a page holds a cut entry");
          }
          Entry e = new Entry(d, pos);
          e.page = p;
          p.entries.add(e);
          all.add(e);
          pos += size;
        }
        p.bytes = d.length;
        if (p.entries.isEmpty()) {
          throw new KvStoreException(
              "storage directory " + directory + " is damaged: an empty page is linked");
        }
        if (p.bytes < pageBytes / 2) {
          p.roomy = true;
          roomy.add(p);
        }
      }
    }
    Entry[] sorted = all.toArray(new Entry[0]);
    all = null;
    Arrays.sort(sorted, KEY_ORDER);
    for (int i = 1; i < sorted.length; i++) {
      if (Entry.compareKeys(sorted[i - 1], sorted[i]) == 0) {
        throw new KvStoreException(
            "storage directory " + directory + " is damaged: a key is stored twice");
      }
    }
    TreeSet<Entry> built = new TreeSet<>(KEY_ORDER);
    built.addAll(new SortedRun(sorted)); // TreeSet builds from a SortedSet in linear time
    index = built;
    table = KeyTable.of(Arrays.asList(sorted));
  }

  /**
   * A sorted array seen as a {@link SortedSet} with the index's comparator: what {@link
   * TreeSet#addAll} needs to build its tree in one linear pass. Only iteration and size are used.
   */
  private static final class SortedRun extends AbstractSet<Entry> implements SortedSet<Entry> {
    private final Entry[] sorted;

    SortedRun(Entry[] sorted) {
      this.sorted = sorted;
    }

    @Override
    public Iterator<Entry> iterator() {
      return Arrays.asList(sorted).iterator();
    }

    @Override
    public int size() {
      return sorted.length;
    }

    @Override
    public Comparator<? super Entry> comparator() {
      return KEY_ORDER;
    }

    @Override
    public SortedSet<Entry> subSet(Entry from, Entry to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public SortedSet<Entry> headSet(Entry to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public SortedSet<Entry> tailSet(Entry from) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Entry first() {
      return sorted[0];
    }

    @Override
    public Entry last() {
      return sorted[sorted.length - 1];
    }
  }

  /** The number of keys. */
  int size() {
    return index.size();
  }

  /** The entries of {@code range}, which must not be empty, in key order. */
  NavigableSet<Entry> range(KeyRange range) {
    return index.subSet(
        Entry.probe(range.lowerBound()), true, Entry.probe(range.upperBound()), false);
  }

  /** The entry of the key with this encoding, or null. */
  Entry find(byte[] key) {
    return table.find(key);
  }

  /** An entry as the SPI's value, with its key decoded unless the caller knows it. */
  static KvEntry entryOf(Entry n, Key knownKey) {
    if (n == null) {
      return null;
    }
    Key key = knownKey != null ? knownKey : Key.decode(n.key());
    return new KvEntry(key, n.value(), n.versionstamp());
  }

  /** Starts applying a group commit. */
  void startBatch() {
    dirty.clear();
    changedPages.clear();
  }

  /**
   * Ends a group commit: packs each changed page that still lives into a new array.
   *
   * @return the objects to store (pages and ring neighbours), empty if nothing changed
   */
  Set<Object> finishBatch() {
    for (Page p : changedPages) {
      p.dirty = false;
      if (!p.dead) {
        p.rewrite();
        dirty.add(p);
      }
    }
    changedPages.clear();
    return dirty;
  }

  /** Tells whether every check of {@code op} holds now. */
  boolean checksHold(AtomicOperation op) {
    for (AtomicOperation.Check c : op.checks()) {
      Entry n = find(c.key().encoded());
      long current = n == null ? AtomicOperation.ABSENT : n.versionstamp();
      if (current != c.versionstamp()) {
        return false;
      }
    }
    return true;
  }

  /** Applies the mutations of {@code op}, whose checks hold, with versionstamp {@code vs}. */
  void apply(AtomicOperation op, long vs) {
    for (AtomicOperation.Mutation m : op.mutations()) {
      byte[] key = m.key().encoded();
      int h = KeyTable.hash(key); // once: for the lookup, and the removal or addition after it
      Entry existing = table.find(key, h);
      if (m.isDelete()) {
        if (existing != null) {
          index.remove(existing);
          table.remove(existing, h);
          removeFromPage(existing);
        }
      } else if (existing != null) {
        byte[] packed = Entry.pack(key, m.value(), vs);
        Page p = existing.page;
        int grows = packed.length - existing.size();
        if (p.bytes + grows <= pageBytes || p.entries.size() == 1) {
          existing.buf = packed;
          existing.off = 0;
          p.bytes += grows;
          changed(p);
        } else {
          // it no longer fits: move it to a page with room
          removeFromPage(existing);
          existing.buf = packed;
          existing.off = 0;
          place(existing);
        }
      } else {
        Entry e = new Entry(Entry.pack(key, m.value(), vs), 0);
        place(e);
        index.add(e);
        table.add(e, h);
      }
    }
  }

  private void changed(Page p) {
    if (!p.dirty) {
      p.dirty = true;
      changedPages.add(p);
    }
  }

  /**
   * Puts an entry (new, or moved out of a page it outgrew) in a page with room: the page new keys
   * go to, else a page under half full, else a new page. An entry larger than a page gets a page of
   * its own.
   */
  private void place(Entry e) {
    int size = e.size();
    Page p;
    if (size > pageBytes / 2) {
      p = new Page(new byte[0]);
      link(p);
    } else {
      p = fill;
      if (p == null || p.dead || p.bytes + size > pageBytes) {
        // any page under half full has room for an entry of at most half a page
        p = null;
        while (!roomy.isEmpty()) {
          Page r = roomy.poll();
          r.roomy = false;
          if (!r.dead && r.bytes < pageBytes / 2) {
            p = r;
            break;
          }
        }
        if (p == null) {
          p = new Page(new byte[0]);
          link(p);
        }
        fill = p;
      }
    }
    e.page = p;
    p.entries.add(e);
    p.bytes += size;
    changed(p);
  }

  /**
   * Takes an entry out of its page. An emptied page leaves its ring; a page that falls under a
   * quarter full moves its entries to the page new keys go to, if they fit there, and leaves its
   * ring too (a merge); a page under half full is offered to new keys.
   */
  private void removeFromPage(Entry e) {
    Page p = e.page;
    removeEntry(p, e);
    p.bytes -= e.size();
    e.page = null;
    changed(p);
    if (p.entries.isEmpty()) {
      unlink(p);
      return;
    }
    Page f = fill;
    if (p.bytes < pageBytes / 4
        && f != null
        && f != p
        && !f.dead
        && f.bytes + p.bytes <= pageBytes) {
      for (Entry moved : p.entries) {
        moved.page = f;
        f.entries.add(moved);
      }
      f.bytes += p.bytes;
      changed(f);
      p.entries.clear();
      p.bytes = 0;
      unlink(p);
      return;
    }
    if (p.bytes < pageBytes / 2 && !p.roomy && p != fill) {
      p.roomy = true;
      roomy.add(p);
    }
  }

  private static void removeEntry(Page p, Entry e) {
    ArrayList<Entry> list = p.entries;
    for (int i = list.size() - 1; i >= 0; i--) {
      if (list.get(i) == e) {
        list.remove(i);
        return;
      }
    }
    throw new IllegalStateException("an entry is not in its page");
  }

  /** Inserts page {@code p} right after the sentinel of the next ring in turn. */
  private void link(Page p) {
    Page s = root.rings[nextRing++ & (StoreRoot.RINGS - 1)];
    Page first = s.next;
    p.prev = s;
    p.next = first;
    first.prev = p;
    s.next = p;
    dirty.add(first);
    dirty.add(s);
    // p itself is written by the page rewrite at the end of the group commit
  }

  private void unlink(Page p) {
    Page before = p.prev;
    Page after = p.next;
    before.next = after;
    after.prev = before;
    p.dead = true;
    dirty.remove(p); // nothing references it any more: not worth writing
    dirty.add(before);
    dirty.add(after);
    if (fill == p) {
      fill = null;
    }
  }

  /** Number of pages holding entries. */
  int pageCount() {
    int n = 0;
    for (Page s : root.rings) {
      for (Page p = s.next; p != s; p = p.next) {
        n++;
      }
    }
    return n;
  }
}
