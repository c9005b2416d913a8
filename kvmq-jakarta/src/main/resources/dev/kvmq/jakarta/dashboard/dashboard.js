// kvmq dashboard: talks to the admin REST API only (same origin, the browser's own sign-in).
// Live data comes from each queue's server-sent events; the browser never polls on a timer.
// No framework, no build step: plain DOM, text inserted with textContent only.
'use strict';
(() => {
  const API = document.currentScript.dataset.api; // e.g. "/kvmq/", filled in by the server
  const WINDOW = 300;          // seconds of throughput the charts show
  const MAX_STREAMS = 4;       // event streams the overview opens (browsers allow ~6 connections per host)
  const REFRESH_GAP_MS = 1500; // at most one job-list or activity reload per gap, after events

  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  };
  const svg = (tag, attrs = {}) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };
  const q = (name) => API + 'queues/' + encodeURIComponent(name);
  const fmt = new Intl.NumberFormat();
  const rate = (n) => n === null ? '–' : n.toFixed(n < 10 ? 2 : 1);

  // ---- HTTP

  /** status: the HTTP status; detail: the problem's detail when the answer is problem+json with one. */
  class ApiError extends Error {
    constructor(status, message, detail) { super(message); this.status = status; this.detail = detail; }
  }

  async function call(method, url, body) {
    const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(url, init);
    const text = await r.text();
    if (!r.ok) {
      let message = r.status + ' ' + r.statusText;
      let detail;
      try {
        const p = JSON.parse(text);
        message = (p.title || message) + (p.detail ? ': ' + p.detail : '');
        if ((r.headers.get('Content-Type') || '').startsWith('application/problem+json') && typeof p.detail === 'string') {
          detail = p.detail;
        }
      } catch (e) { /* not problem+json */ }
      throw new ApiError(r.status, message, detail);
    }
    return text ? JSON.parse(text) : null;
  }

  function showError(e) {
    const box = $('error');
    box.textContent = e instanceof ApiError ? e.message : 'Error: ' + e.message;
    box.hidden = false;
  }
  function clearError() { $('error').hidden = true; $('error').textContent = ''; }
  function announce(text) { $('announcer').textContent = text; }

  // ---- throttling: run fn at most once per gap, and once more after the last request

  function throttle(fn, gap) {
    let last = 0; let timer = null;
    const run = () => { timer = null; last = Date.now(); fn(); };
    return () => {
      if (timer) return;
      const wait = Math.max(0, last + (typeof gap === 'function' ? gap() : gap) - Date.now());
      timer = setTimeout(run, wait);
    };
  }

  // The server counts an outcome just after the commit that the event reports: read the
  // throughput once more a little later so that the chart does not miss the last one.
  function later(fn) { setTimeout(fn, 2500); }

  // ---- live connection state

  // The browser reconnects a stream that drops by itself, but gives up on it for good (readyState
  // CLOSED) when an answer is not an event stream: e.g. the 404 a server sends while the application
  // is deployed again after a restart. Such a stream is opened again after 1 s, then 2, 4, ... and at
  // most 30 s between tries; back to 1 s once it is open.
  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 30000;
  const streams = new Set(); // {source: EventSource, retryAt: when it is opened again (0: not waiting), ...}
  let countdown = null;      // moves the "in N s" of the label on while a stream waits to be opened again

  function connection() {
    const c = $('connection');
    let open = 0; let failing = 0; let next = Infinity;
    for (const s of streams) {
      if (s.source.readyState === EventSource.OPEN) open++;
      else failing++;
      if (s.retryAt) next = Math.min(next, s.retryAt);
    }
    const state = streams.size === 0 ? 'idle' : failing === 0 ? 'live' : open > 0 ? 'connecting' : 'down';
    c.dataset.state = state;
    const label = { idle: 'Not live', live: 'Live', connecting: 'Reconnecting…', down: 'Disconnected: retrying' }[state];
    const waiting = state !== 'live' && next !== Infinity;
    const secs = waiting ? Math.max(1, Math.ceil((next - Date.now()) / 1000)) : 0;
    // The countdown is not announced each second: the status region says the state, once.
    if (c.children.length !== 2 || c.firstElementChild.textContent !== label) {
      c.replaceChildren(el('span', { text: label }), el('span', { 'aria-hidden': 'true' }));
    }
    c.lastElementChild.textContent = !waiting ? '' : state === 'down' ? ' in ' + secs + ' s' : ' (next try in ' + secs + ' s)';
    if (waiting && !countdown) countdown = setInterval(connection, 1000);
    else if (!waiting && countdown) { clearInterval(countdown); countdown = null; }
  }

  /**
   * Opens the queue's event stream; onSummary gets each {name, paused, waiting, ...}; onReopen is
   * called when the stream is open again after it was down (what the page shows may be stale), and
   * onClosed each time the browser gave up on it (before it is opened again).
   */
  function listen(name, onSummary, onReopen, onClosed) {
    const s = { source: null, retryAt: 0, timer: null, delay: RETRY_FIRST_MS, opened: false, down: false };
    const open = () => {
      s.timer = null; s.retryAt = 0;
      const source = new EventSource(q(name) + '/events');
      s.source = source;
      source.addEventListener('queue', (ev) => onSummary(JSON.parse(ev.data)));
      source.addEventListener('open', () => {
        const reopened = s.opened && s.down;
        s.opened = true; s.down = false; s.delay = RETRY_FIRST_MS;
        connection();
        if (reopened && onReopen) onReopen();
      });
      source.addEventListener('error', () => {
        s.down = true;
        if (source.readyState === EventSource.CLOSED && s.source === source && streams.has(s)) {
          s.retryAt = Date.now() + s.delay;
          s.timer = setTimeout(open, s.delay);
          s.delay = Math.min(2 * s.delay, RETRY_MAX_MS);
          if (onClosed) onClosed();
        }
        connection();
      });
      connection();
    };
    streams.add(s);
    open();
    return s;
  }
  function stopListening(s) {
    s.source.close();
    clearTimeout(s.timer);
    streams.delete(s);
    connection();
  }
  function closeStreams() {
    for (const s of streams) { s.source.close(); clearTimeout(s.timer); }
    streams.clear();
    connection();
  }

  // ---- throughput (GET .../activity?seconds=N: per-second counts kept by the server)

  async function activity(name) {
    try {
      const a = await call('GET', q(name) + '/activity?seconds=' + WINDOW);
      return { start: a.perSecond.start, completed: a.perSecond.completed, failed: a.perSecond.failed, at: Date.now() };
    } catch (e) {
      // A server without the endpoint answers 404 with no problem detail (an HTML page, or a bare
      // problem); a 404 with a detail is the endpoint's own answer: no such queue (or the API is off).
      if (e instanceof ApiError && e.status === 404 && e.detail === undefined) return false;
      throw e;
    }
  }

  /** The last WINDOW seconds up to now, moved on locally since the server answered. */
  function series(a) {
    const shift = Math.max(0, Math.floor((Date.now() - a.at) / 1000));
    const take = (xs) => {
      const out = xs.slice(Math.min(shift, xs.length)).concat(new Array(Math.min(shift, WINDOW)).fill(0));
      return out.slice(-WINDOW);
    };
    return { completed: take(a.completed), failed: take(a.failed) };
  }

  function perSecondLastMinute(xs) {
    const last = xs.slice(-60);
    return last.length ? last.reduce((s, x) => s + x, 0) / 60 : 0;
  }

  function drawChart(target, a, w, h) {
    target.replaceChildren();
    if (!a) return;
    const s = series(a);
    const peak = Math.max(0, ...s.completed, ...s.failed);
    const max = Math.max(1, peak);
    const line = (xs, cls) => {
      const step = w / Math.max(1, WINDOW - 1);
      const pts = xs.map((x, i) => (i * step).toFixed(1) + ',' + (h - 1 - (x / max) * (h - 2)).toFixed(1)).join(' ');
      target.append(svg('polyline', { points: pts, class: cls }));
    };
    line(s.completed, 'completed');
    line(s.failed, 'failed');
    return { s, peak };
  }

  // ---- router

  let leave = () => {};
  function route() {
    leave();
    leave = () => {};
    clearError();
    closeStreams();
    const m = location.hash.match(/^#\/queue\/(.+)$/);
    $('overview').hidden = !!m;
    $('queue').hidden = !m;
    if (m) showQueue(decodeURIComponent(m[1]));
    else showOverview();
  }

  // ---- overview: every queue

  async function showOverview() {
    document.title = 'Queues – kvmq dashboard';
    const body = $('queues').tBodies[0];
    let list;
    try {
      list = await call('GET', API + 'queues');
    } catch (e) { showError(e); return; }
    body.replaceChildren();
    $('no-queues').hidden = list.length > 0;
    const rows = new Map();
    for (const s of list) {
      const cells = {
        state: el('td'), waiting: el('td', { class: 'num' }), delayed: el('td', { class: 'num' }),
        processing: el('td', { class: 'num' }), dead: el('td', { class: 'num' }),
        completed: el('td', { class: 'num', text: '–' }), failed: el('td', { class: 'num', text: '–' }),
        chart: el('td'), action: el('td'),
      };
      const spark = svg('svg', { class: 'spark', viewBox: '0 0 120 24', preserveAspectRatio: 'none', role: 'img',
        'aria-label': 'throughput of ' + s.name + ', last 5 minutes' });
      cells.chart.append(spark);
      const button = el('button', { type: 'button' });
      cells.action.append(button);
      const nameCell = el('th', { scope: 'row' }, el('a', { href: '#/queue/' + encodeURIComponent(s.name), text: s.name }));
      if (s.opened === false) {
        nameCell.append(' ', el('span', { class: 'badge unopened', text: 'no handler here',
          title: 'No @QueueHandler or JobQueue of this queue in this application: its jobs wait for one.'
            + ' They can be read, retried, cancelled and deleted here, not pushed.' }));
      }
      const tr = el('tr', { 'data-queue': s.name },
        nameCell,
        cells.state, cells.waiting, cells.delayed, cells.processing, cells.dead, cells.completed, cells.failed,
        cells.chart, cells.action);
      body.append(tr);
      const row = { cells, spark, button, summary: s, activity: null };
      rows.set(s.name, row);
      button.addEventListener('click', () => pauseOrResume(row.summary, (p) => { row.summary.paused = p; fill(row); }));
      fill(row);
    }
    // After a stream was down (a restart of the server, say), every row may be stale, streamed or
    // not: read the list again; if queues came or went, draw the overview again.
    let shown = true;
    const refresh = throttle(async () => {
      let fresh;
      try {
        fresh = await call('GET', API + 'queues');
      } catch (e) { if (shown) showError(e); return; }
      if (!shown) return;
      clearError();
      if (fresh.length !== rows.size || fresh.some((s) => !rows.has(s.name))) { route(); return; }
      for (const s of fresh) { const row = rows.get(s.name); row.summary = s; fill(row); row.reload(); }
    }, REFRESH_GAP_MS);
    // live: one stream per queue, up to MAX_STREAMS; activity reloaded after events
    let n = 0;
    for (const row of rows.values()) {
      const name = row.summary.name;
      const reload = throttle(async () => {
        try { row.activity = await activity(name); fill(row); } catch (e) { showError(e); }
      }, REFRESH_GAP_MS * 2);
      row.reload = reload;
      reload();
      if (n++ < MAX_STREAMS) {
        listen(name, (s) => { row.summary = s; fill(row); reload(); later(reload); }, refresh);
      }
    }
    const ticker = setInterval(() => { for (const row of rows.values()) fill(row); }, 5000);
    leave = () => { shown = false; clearInterval(ticker); };
  }

  function fill(row) {
    const { cells, summary: s } = row;
    cells.state.replaceChildren(el('span', { class: 'badge state-' + (s.paused ? 'paused' : 'running'),
      text: s.paused ? 'paused' : 'running' }));
    for (const k of ['waiting', 'delayed', 'processing', 'dead']) cells[k].textContent = fmt.format(s[k]);
    row.button.textContent = s.paused ? 'Resume' : 'Pause';
    row.button.setAttribute('aria-label', (s.paused ? 'Resume' : 'Pause') + ' queue ' + s.name);
    if (row.activity) {
      const drawn = drawChart(row.spark, row.activity, 120, 24);
      cells.completed.textContent = rate(perSecondLastMinute(drawn.s.completed));
      cells.failed.textContent = rate(perSecondLastMinute(drawn.s.failed));
    }
  }

  async function pauseOrResume(summary, done) {
    const pause = !summary.paused;
    try {
      await call('POST', q(summary.name) + (pause ? '/pause' : '/resume'));
      done(pause);
      announce('Queue ' + summary.name + (pause ? ' paused' : ' resumed'));
    } catch (e) { showError(e); }
  }

  // ---- one queue

  // Dead letters, completed and cancelled jobs are listed a page at a time with the server's cursor
  // (GET .../list?status=&cursor=): O(page) on the server. The others in queue order with places
  // (GET .../jobs?offset=). cursors holds the cursor of each page shown so far, for "Previous".
  // A group or unique-key filter (one status chosen) lists any status by cursor: the server checks
  // each job of the status, so a page may be short or empty and still have a next one.
  const CURSOR_STATUSES = new Set(['dead', 'completed', 'cancelled']);
  const CANCELLABLE = new Set(['waiting', 'delayed', 'processing', 'held']);
  const view = { name: null, summary: null, status: '', group: '', unique: '', offset: 0, limit: 50, activity: undefined,
    schedules: null, cursors: [null], next: null, count: null, missing: null };
  const narrowed = () => view.status !== '' && (view.group !== '' || view.unique !== '');
  const listedByCursor = () => CURSOR_STATUSES.has(view.status) || narrowed();

  function showQueue(name) {
    Object.assign(view, { name, summary: null, offset: 0, activity: undefined, schedules: null,
      cursors: [null], next: null, count: null, missing: null });
    readFilters();
    view.limit = Number($('f-limit').value);
    document.title = name + ' – kvmq dashboard';
    $('q-name').textContent = name;
    $('q-state').textContent = '';
    $('q-state').className = 'badge';
    for (const k of ['waiting', 'delayed', 'processing', 'dead', 'held', 'completed-rate', 'failed-rate']) $('q-' + k).textContent = '–';
    $('q-summary').textContent = '';
    $('page-info').textContent = '';
    $('jobs').tBodies[0].replaceChildren();
    $('schedules').tBodies[0].replaceChildren();
    $('q-chart').replaceChildren();
    let stream = null;
    // The server has no such queue (a 404 with its problem detail, not one of a server without the
    // endpoint): say so, and stop asking.
    const unknown = (e) => {
      if (view.name !== name || view.missing !== null) return;
      view.missing = e.detail;
      if (stream) stopListening(stream);
      showError(e);
      drawQueueChart();
    };
    const isUnknown = (e) => e instanceof ApiError && e.status === 404 && e.detail !== undefined;
    // A page of jobs costs the server more as the queue grows (it reads the whole queue):
    // after events, reload no sooner than 1.5 s and than 5 times the last load took.
    const reloadJobs = throttle(loadJobs, () => Math.max(REFRESH_GAP_MS, 5 * lastLoadMs));
    const reloadActivity = throttle(async () => {
      try {
        const a = await activity(name);
        if (view.name === name) { view.activity = a; drawQueueChart(); }
      } catch (e) { if (isUnknown(e)) unknown(e); else showError(e); }
    }, REFRESH_GAP_MS * 2);
    const announceSummary = throttle(() => {
      const s = view.summary;
      $('q-summary').textContent = s.name + (s.paused ? ', paused: ' : ': ') + s.waiting + ' waiting, '
        + s.delayed + ' delayed, ' + s.processing + ' processing, ' + s.dead + ' dead';
    }, 5000);
    let first = true;
    stream = listen(name, (s) => {
      const was = view.summary;
      view.summary = s;
      fillQueue();
      if (was && was.paused !== s.paused) announce('Queue ' + s.name + (s.paused ? ' is paused' : ' is running'));
      announceSummary();
      if (first) { first = false; loadJobs(); loadSchedules(); } else { reloadJobs(); reloadSchedules(); }
      reloadActivity();
      later(reloadActivity);
    }, () => {
      // open again after it was down: the stream's first event brings the counts; the jobs, the
      // schedules and the throughput are read again at once, and errors of the outage are stale
      clearError();
      first = true;
      reloadActivity();
    }, async () => {
      // The browser gave up on the stream: a server that is starting answers 404 without a
      // problem detail, one without this queue with its detail.
      try { await call('GET', q(name)); } catch (e) { if (isUnknown(e)) unknown(e); }
    });
    const reloadSchedules = throttle(loadSchedules, REFRESH_GAP_MS);
    reloadActivity();
    const ticker = setInterval(() => { drawQueueChart(); renderSchedules(view.schedules); }, 5000);
    leave = () => clearInterval(ticker);
  }

  function fillQueue() {
    const s = view.summary;
    const state = $('q-state');
    state.textContent = s.paused ? 'paused' : 'running';
    state.className = 'badge state-' + (s.paused ? 'paused' : 'running');
    for (const k of ['waiting', 'delayed', 'processing', 'dead']) $('q-' + k).textContent = fmt.format(s[k]);
    $('q-held').textContent = fmt.format(s.held || 0);
    $('q-pause').textContent = s.paused ? 'Resume' : 'Pause';
    $('q-delete-waiting').disabled = s.waiting + s.delayed === 0;
    $('q-cancel-waiting').disabled = s.waiting + s.delayed === 0;
  }

  function drawQueueChart() {
    const drawn = drawChart($('q-chart'), view.activity, 300, 80);
    if (!drawn) {
      $('q-chart-text').textContent = view.missing !== null ? 'Not available: ' + view.missing + '.'
        : view.activity === false ? 'Not available: this server has no activity endpoint.' : 'Loading…';
      return;
    }
    const c = perSecondLastMinute(drawn.s.completed); const f = perSecondLastMinute(drawn.s.failed);
    $('q-completed-rate').textContent = rate(c);
    $('q-failed-rate').textContent = rate(f);
    const total = (xs) => xs.reduce((a, b) => a + b, 0);
    $('q-chart-text').textContent = 'In 5 minutes: ' + fmt.format(total(drawn.s.completed)) + ' completed, '
      + fmt.format(total(drawn.s.failed)) + ' failed; peak ' + fmt.format(drawn.peak) + ' per second.';
  }

  /** Total of the current filter, from the queue's counts. */
  function filterTotal() {
    const s = view.summary;
    if (!s) return null;
    if (view.status === '') return s.waiting + s.delayed + s.processing + (s.held || 0);
    if (narrowed() || view.status === 'completed' || view.status === 'cancelled') return view.count;
    return s[view.status];
  }

  let loading = 0;
  let lastLoadMs = 0;
  async function loadJobs() {
    const ticket = ++loading;
    const name = view.name;
    const started = performance.now();
    let jobs;
    let more;
    const byCursor = listedByCursor();
    try {
      if (byCursor) {
        const narrow = new URLSearchParams({ status: view.status });
        if (view.group) narrow.set('group', view.group);
        if (view.unique) narrow.set('unique', view.unique);
        const params = new URLSearchParams(narrow);
        params.set('limit', view.limit);
        const cursor = view.cursors[view.cursors.length - 1];
        if (cursor) params.set('cursor', cursor);
        const [page, counted] = await Promise.all([
          call('GET', q(name) + '/list?' + params),
          view.status === 'dead' && !narrowed() ? null : call('GET', q(name) + '/count?' + narrow)]);
        jobs = page.jobs;
        more = page.next !== undefined;
        view.next = page.next || null;
        if (counted) view.count = counted.count;
      } else {
        const params = new URLSearchParams({ offset: view.offset, limit: view.limit + 1 });
        if (view.status) params.set('status', view.status);
        jobs = await call('GET', q(name) + '/jobs?' + params);
        more = jobs.length > view.limit;
      }
    } catch (e) { showError(e); return; }
    lastLoadMs = performance.now() - started;
    if (ticket !== loading || name !== view.name) return; // a newer load or view won
    renderJobs(jobs.slice(0, view.limit));
    const total = filterTotal();
    const start = byCursor ? (view.cursors.length - 1) * view.limit : view.offset;
    const from = jobs.length ? start + 1 : 0;
    const to = start + Math.min(jobs.length, view.limit);
    $('page-info').textContent = jobs.length
      ? 'Jobs ' + fmt.format(from) + '–' + fmt.format(to) + (total !== null && total !== undefined ? ' of ' + fmt.format(Math.max(total, to)) : '')
      : (start > 0 ? 'No jobs on this page' : 'No jobs');
    $('page-prev').disabled = byCursor ? view.cursors.length === 1 : view.offset === 0;
    $('page-next').disabled = !more;
  }

  function when(iso) {
    if (!iso) return el('span', { text: '–' });
    const t = new Date(iso);
    return el('time', { datetime: iso, title: iso, text: t.toLocaleTimeString() + ' (' + relative(t.getTime() - Date.now()) + ')' });
  }

  /** "in 25 s", "25 s ago", "in 3 min", "2 h ago", "in 4 d": the whole units, rounded down. */
  function relative(ms) {
    const secs = Math.round(Math.abs(ms) / 1000);
    if (secs === 0) return 'now';
    const n = secs < 60 ? secs + ' s' : secs < 3600 ? Math.floor(secs / 60) + ' min'
      : secs < 86400 ? Math.floor(secs / 3600) + ' h' : Math.floor(secs / 86400) + ' d';
    return ms > 0 ? 'in ' + n : n + ' ago';
  }

  // A job's unique key: the key as text, its scope (and whether the job still holds it) in the title.
  function uniqueCell(u, holds) {
    if (!u) return el('span', { text: '–' });
    const scope = u.scope === 'period' ? 'for ' + u.period + ' after the push' : 'while the job ' + (u.scope === 'waiting' ? 'waits' : 'waits or runs');
    return el('span', { text: u.key, title: 'taken ' + scope + (u.debounce ? ', debounced' : '') + (holds ? '; held by this job' : '; not held by this job now') });
  }

  function renderJobs(jobs) {
    const body = $('jobs').tBodies[0];
    body.replaceChildren();
    if (jobs.length === 0) {
      body.append(el('tr', {}, el('td', { colspan: 16, text: 'No jobs here.' })));
      return;
    }
    const now = Date.now();
    for (const j of jobs) {
      // a state this version's type no longer decodes: its stored text (or bytes), and why
      const undecoded = j.undecodedState;
      const payload = undecoded
        ? (undecoded.text ?? 'base64 ' + undecoded.base64)
        : JSON.stringify(j.state);
      const full = undecoded ? payload : JSON.stringify(j.state, null, 2);
      const short = payload.length > 80 ? payload.slice(0, 80) + '…' : payload;
      const code = el('code', { text: short });
      if (undecoded) {
        code.title = 'Does not decode: ' + (undecoded.error ?? '');
      }
      const payloadCell = payload.length > 80
        ? el('details', {}, el('summary', {}, code), el('pre', { text: full }))
        : code;
      const error = j.lastError
        ? el('span', { text: j.lastError.type + ': ' + j.lastError.message, title: 'at ' + j.lastError.failedAt })
        : el('span', { text: '–' });
      const actions = el('td');
      if (j.status === 'dead') {
        actions.append(
          el('button', { type: 'button', text: 'Retry', 'aria-label': 'Retry dead job ' + j.id, onclick: () => retryDead(j.id) }),
          el('button', { type: 'button', class: 'danger', text: 'Delete…', 'aria-label': 'Delete dead job ' + j.id,
            onclick: () => deleteJob(j.id, true) }));
      } else if (j.status === 'held') {
        actions.append(
          el('button', { type: 'button', text: 'Release', 'aria-label': 'Release held job ' + j.id, onclick: () => releaseHeld(j.id) }),
          el('button', { type: 'button', class: 'danger', text: 'Delete…', 'aria-label': 'Delete held job ' + j.id,
            onclick: () => deleteJob(j.id, false) }));
      } else if (j.status === 'completed' || j.status === 'cancelled') {
        actions.append(el('button', { type: 'button', class: 'danger', text: 'Delete…', 'aria-label': 'Delete ' + j.status + ' job ' + j.id,
          onclick: () => deleteJob(j.id, false) }));
      } else if (j.status !== 'processing') {
        actions.append(el('button', { type: 'button', class: 'danger', text: 'Delete…', 'aria-label': 'Delete job ' + j.id,
          onclick: () => deleteJob(j.id, false) }));
      }
      if (CANCELLABLE.has(j.status)) {
        actions.prepend(el('button', { type: 'button', class: 'danger', text: 'Cancel…', 'aria-label': 'Cancel job ' + j.id,
          onclick: () => cancelJob(j.id, j.status) }));
      }
      const result = j.result === undefined ? el('span', { text: '–' })
        : j.result.length > 80
          ? el('details', {}, el('summary', {}, el('code', { text: j.result.slice(0, 80) + '…' })), el('pre', { text: j.result }))
          : el('code', { text: j.result });
      const attempts = (j.attempts || []).length === 0 ? el('span', { text: '–' })
        : el('details', {}, el('summary', { text: j.attempts.length + (j.attempts.length === 1 ? ' attempt' : ' attempts') }),
          el('ol', { class: 'attempts' }, ...j.attempts.map((a) => el('li', { value: String(a.number) },
            when(a.startedAt), el('span', { text: a.endedAt ? ' – ' : ' – running' }), a.endedAt ? when(a.endedAt) : el('span'),
            el('span', { text: ' on ' + a.node }),
            a.error ? el('span', { class: 'status-dead', text: ': ' + a.error.type + ': ' + a.error.message }) : el('span')))));
      const ended = j.finishedAt || j.cancelledAt;
      const delayed = j.delayUntil && new Date(j.delayUntil).getTime() > now;
      body.append(el('tr', { 'data-job': j.id, 'data-status': j.status },
        el('td', { class: 'num', text: j.place === undefined || j.place === 0 ? '–' : fmt.format(j.place) }),
        el('td', { class: 'id', text: j.id }),
        el('td', { class: 'status-' + j.status, text: j.status }),
        el('td', { class: 'num', text: String(j.priority) }),
        el('td', { class: 'num', text: String(j.attempt) }),
        el('td', { class: 'num', text: String(j.retriesLeft) }),
        el('td', {}, delayed ? when(j.delayUntil) : el('span', { text: '–' })),
        el('td', {}, when(j.lockUntil)),
        el('td', {}, payloadCell),
        el('td', {}, error),
        el('td', { class: 'group' }, el('span', { text: j.group === undefined ? '–' : j.group })),
        el('td', { class: 'unique' }, uniqueCell(j.unique, j.holdsUniqueKey)),
        el('td', {}, ended ? when(ended) : el('span', { text: '–' })),
        el('td', {}, result),
        el('td', {}, attempts),
        actions));
    }
  }

  async function deleteJob(id, dead) {
    if (!confirm('Delete ' + (dead ? 'dead job ' : 'job ') + id + ' from queue ' + view.name + '? This cannot be undone.')) return;
    try {
      await call('DELETE', q(view.name) + (dead ? '/dead/' : '/jobs/') + encodeURIComponent(id));
      announce('Deleted job ' + id);
      loadJobs();
    } catch (e) { showError(e); }
  }

  async function cancelJob(id, status) {
    if (!confirm('Cancel ' + status + ' job ' + id + ' of queue ' + view.name + '? It will not run'
      + (status === 'processing' ? '; its handler is told to stop and its outcome is refused.' : '.'))) return;
    try {
      await call('POST', q(view.name) + '/jobs/' + encodeURIComponent(id) + '/cancel');
      announce('Cancelled job ' + id);
      loadJobs();
    } catch (e) { showError(e); }
  }

  async function retryDead(id) {
    try {
      await call('POST', q(view.name) + '/dead/' + encodeURIComponent(id) + '/retry');
      announce('Job ' + id + ' is back in the queue');
      loadJobs();
    } catch (e) { showError(e); }
  }

  // ---- schedules (GET .../schedules; pause, resume, trigger, delete)

  let scheduleTicket = 0;
  async function loadSchedules() {
    const ticket = ++scheduleTicket;
    const name = view.name;
    let list;
    try {
      list = await call('GET', q(name) + '/schedules');
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && view.name === name) { view.schedules = []; renderSchedules([]); return; }
      showError(e); return;
    }
    if (ticket !== scheduleTicket || name !== view.name) return; // a newer load or view won
    view.schedules = list;
    renderSchedules(list);
  }

  function describeSpec(s) {
    if (s.cron !== undefined) return 'cron ' + s.cron + ' (' + s.zone + ')';
    return 'every ' + s.every + (s.anchor && s.anchor !== '1970-01-01T00:00:00Z' ? ' from ' + s.anchor : '');
  }

  function renderSchedules(list) {
    if (!list) return;
    const body = $('schedules').tBodies[0];
    body.replaceChildren();
    $('no-schedules').hidden = list.length > 0;
    $('schedules-box').hidden = list.length === 0;
    for (const s of list) {
      const payload = JSON.stringify(s.state);
      const short = payload.length > 80 ? payload.slice(0, 80) + '…' : payload;
      const policies = 'missed: ' + s.missed + (s.missed === 'run-each' ? ' (' + s.missedLimit + ')' : '')
        + ', overlap: ' + s.overlap + ', lateness: ' + s.lateness;
      const last = s.lastSlot
        ? el('span', {}, when(s.lastSlot), el('br'), el('code', { class: 'id', text: s.lastJobId || '' }))
        : el('span', { text: 'never' });
      const actions = el('td');
      actions.append(
        el('button', { type: 'button', text: s.paused ? 'Resume' : 'Pause',
          'aria-label': (s.paused ? 'Resume' : 'Pause') + ' schedule ' + s.name,
          onclick: () => scheduleAction(s.name, s.paused ? 'resume' : 'pause') }),
        el('button', { type: 'button', text: 'Run now', 'aria-label': 'Run schedule ' + s.name + ' now',
          onclick: () => scheduleAction(s.name, 'trigger') }),
        el('button', { type: 'button', class: 'danger', text: 'Delete…', 'aria-label': 'Delete schedule ' + s.name,
          onclick: () => deleteSchedule(s.name) }));
      body.append(el('tr', { 'data-schedule': s.name },
        el('th', { scope: 'row', class: 'id', text: s.name }),
        el('td', {}, el('code', { text: describeSpec(s) })),
        el('td', {}, el('span', { class: 'badge state-' + (s.paused ? 'paused' : 'running'), text: s.paused ? 'paused' : 'running' })),
        el('td', { text: policies }),
        el('td', {}, s.nextDue ? when(s.nextDue) : el('span', { text: '–' })),
        el('td', {}, last),
        el('td', {}, el('code', { text: short, title: payload })),
        actions));
    }
  }

  async function scheduleAction(name, action) {
    clearError();
    try {
      const r = await call('POST', q(view.name) + '/schedules/' + encodeURIComponent(name) + '/' + action);
      announce(action === 'trigger' ? 'Schedule ' + name + ' pushed job ' + r.id
        : 'Schedule ' + name + (action === 'pause' ? ' paused' : ' resumed'));
      loadSchedules();
    } catch (e) { showError(e); }
  }

  async function deleteSchedule(name) {
    if (!confirm('Delete schedule ' + name + ' of queue ' + view.name + '? Its jobs stay. If the application declares it, it is defined again at the next start.')) return;
    try {
      await call('DELETE', q(view.name) + '/schedules/' + encodeURIComponent(name));
      announce('Deleted schedule ' + name);
      loadSchedules();
    } catch (e) { showError(e); }
  }

  async function releaseHeld(id) {
    try {
      await call('POST', q(view.name) + '/jobs/' + encodeURIComponent(id) + '/release');
      announce('Held job ' + id + ' is released to run');
      loadJobs();
    } catch (e) { showError(e); }
  }

  // ---- push

  function number(id, field, body) {
    const v = $(id).value.trim();
    if (v === '') return;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(field + ' must be a number');
    body[field] = n;
  }

  async function push(ev) {
    ev.preventDefault();
    clearError();
    const out = $('push-result');
    out.textContent = '';
    let body;
    try {
      body = { state: JSON.parse($('push-state').value) };
      number('push-priority', 'priority', body);
      number('push-delay', 'delayMs', body);
      number('push-retries', 'retryCount', body);
      number('push-retry-delay', 'retryDelayMs', body);
      number('push-repeat-delay', 'repeatDelayMs', body);
      const group = $('push-group').value;
      if (group !== '') body.group = group;
      const key = $('push-unique').value;
      if (key !== '') body.unique = { key, scope: $('push-unique-scope').value };
      const rep = $('push-repeat').value.trim();
      if (rep === 'forever') body.repeatCount = 'forever';
      else if (rep !== '') { body.repeatCount = Number(rep); if (!Number.isInteger(body.repeatCount)) throw new Error('Repeats is a whole number or forever'); }
    } catch (e) {
      $('push-state').setAttribute('aria-invalid', 'true');
      showError(new Error(e instanceof SyntaxError ? 'the payload is not valid JSON: ' + e.message : e.message));
      return;
    }
    $('push-state').removeAttribute('aria-invalid');
    try {
      const job = await call('POST', q(view.name) + '/jobs', body);
      const said = job.outcome === 'duplicate' ? 'Not pushed: job ' + job.id + ' holds the unique key'
        : job.outcome === 'debounced' ? 'Job ' + job.id + ' holds the unique key; it now has this payload and delay'
        : 'Pushed job ' + job.id;
      out.textContent = said;
      announce(said);
    } catch (e) { showError(e); }
  }

  // ---- wiring

  $('q-pause').addEventListener('click', () => {
    if (view.summary) pauseOrResume(view.summary, (p) => { view.summary.paused = p; fillQueue(); });
  });
  $('q-delete-waiting').addEventListener('click', async () => {
    const s = view.summary;
    if (!s || !confirm('Delete all ' + (s.waiting + s.delayed) + ' waiting and delayed jobs of queue ' + s.name + '? This cannot be undone.')) return;
    try {
      const r = await call('DELETE', q(s.name) + '/jobs?status=waiting');
      announce('Deleted ' + r.deleted + ' waiting jobs');
      loadJobs();
    } catch (e) { showError(e); }
  });
  $('q-cancel-waiting').addEventListener('click', async () => {
    const s = view.summary;
    if (!s || !confirm('Cancel all ' + (s.waiting + s.delayed) + ' waiting and delayed jobs of queue ' + s.name + '? They will not run.')) return;
    try {
      const r = await call('POST', q(s.name) + '/cancel?status=waiting,delayed');
      announce('Cancelled ' + r.cancelled + ' waiting jobs');
      loadJobs();
    } catch (e) { showError(e); }
  });
  const firstPage = () => { view.offset = 0; view.cursors = [null]; view.next = null; view.count = null; };
  function readFilters() {
    view.status = $('f-status').value;
    const one = view.status !== '';
    $('f-group').disabled = !one;
    $('f-unique').disabled = !one;
    $('f-narrow-hint').hidden = one;
    view.group = one ? $('f-group').value.trim() : '';
    view.unique = one ? $('f-unique').value : '';
  }
  $('f-status').addEventListener('change', () => { readFilters(); firstPage(); loadJobs(); });
  for (const id of ['f-group', 'f-unique']) {
    $(id).addEventListener('change', () => { readFilters(); firstPage(); loadJobs(); });
  }
  $('f-limit').addEventListener('change', () => { view.limit = Number($('f-limit').value); firstPage(); loadJobs(); });
  $('page-prev').addEventListener('click', () => {
    if (listedByCursor()) { if (view.cursors.length > 1) view.cursors.pop(); } else view.offset = Math.max(0, view.offset - view.limit);
    loadJobs();
  });
  $('page-next').addEventListener('click', () => {
    if (listedByCursor()) { if (view.next) view.cursors.push(view.next); } else view.offset += view.limit;
    loadJobs();
  });
  $('push-form').addEventListener('submit', push);
  window.addEventListener('hashchange', () => { route(); $('main').focus(); });
  window.addEventListener('pagehide', closeStreams);
  route();
})();
