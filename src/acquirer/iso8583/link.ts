import net from 'node:net';
import tls from 'node:tls';
import { answerMti, decode, Deframer, encode, frame, type Message } from './codec.ts';
import { ISO_1987, type Layout } from './layout.ts';
import { NETWORK, transmissionTime } from './fields.ts';
import { WarningTally } from './warnings.ts';

/**
 * One persistent connection to an acquiring host, shared by every payment going to it.
 * Requests are multiplexed and matched to answers by terminal and STAN; a request without an
 * answer within the timeout has an unknown outcome (LinkUnknown). The link signs on after each
 * connect, sends an echo when idle, and reconnects with back-off. Bad input from the host (a
 * malformed message, an answer nobody waits for) is logged and dropped; other payments go on.
 */

export interface LinkOptions {
  /** iso8583://host:port, or iso8583s://host:port for TLS */
  url: string;
  layout?: Layout;
  /** ms without an answer before the outcome is unknown (default 20 000) */
  timeoutMs?: number;
  /** ms of silence before an echo (default 30 000) */
  echoMs?: number;
  /** first and largest pause between reconnects (default 100 ms, 10 s) */
  backoffMs?: [number, number];
  /** extra TLS options (a test's own CA) */
  tls?: tls.ConnectionOptions;
  log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
}

/** The request went out (or may have) and no answer came: the money may or may not have moved. */
export class LinkUnknown extends Error {
  override name = 'LinkUnknown';
}

export interface LinkState {
  url: string;
  connected: boolean;
  signed_on: boolean;
  in_flight: number;
  last_echo: string | null;
  reconnects: number;
  dropped_messages: number;
}

interface Pending {
  mti: string;
  resolve: (m: Message) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export function parseHostUrl(url: string): { secure: boolean; host: string; port: number } {
  const m = /^(iso8583s?):\/\/(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/.exec(url);
  if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535)
    throw new Error(`acquirer address ${JSON.stringify(url)}: expected iso8583://HOST:PORT or iso8583s://HOST:PORT`);
  return { secure: m[1] === 'iso8583s', host: m[2].replace(/^\[|\]$/g, ''), port: Number(m[3]) };
}

export class Link {
  private socket?: net.Socket;
  private signedOn = false;
  private closed = false;
  private pending = new Map<string, Pending>();
  private waitingForSignOn: (() => void)[] = [];
  private lastEcho: Date | null = null;
  private lastTraffic = 0;
  private reconnects = 0;
  private dropped = 0;
  private backoff: number;
  private networkStan = 0;
  private echoTimer: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  private readonly target: ReturnType<typeof parseHostUrl>;
  private readonly layout: Layout;
  readonly timeoutMs: number;

  constructor(private opts: LinkOptions) {
    this.target = parseHostUrl(opts.url);
    this.layout = opts.layout ?? ISO_1987;
    this.timeoutMs = opts.timeoutMs ?? 20_000;
    this.backoff = opts.backoffMs?.[0] ?? 100;
    const echoMs = opts.echoMs ?? 30_000;
    this.echoTimer = setInterval(() => this.echoIfIdle(echoMs), Math.max(50, Math.min(echoMs, 5_000)));
    this.echoTimer.unref();
    this.connect();
  }

  /** a host's junk repeats by the thousand: its warnings are counted and summarised (warnings.ts) */
  private readonly warnings = new WarningTally((msg, fields) => this.opts.log?.('warn', msg, fields));

  private log(level: 'info' | 'warn', msg: string, fields: Record<string, unknown> = {}) {
    if (level === 'warn') this.warnings.warn(msg, { acquirer: this.opts.url, ...fields });
    else this.opts.log?.(level, msg, { acquirer: this.opts.url, ...fields });
  }

  state(): LinkState {
    return {
      url: this.opts.url,
      connected: Boolean(this.socket && !this.socket.destroyed && !this.socket.connecting),
      signed_on: this.signedOn,
      in_flight: [...this.pending.keys()].filter((k) => !k.startsWith('~')).length,
      last_echo: this.lastEcho?.toISOString() ?? null,
      reconnects: this.reconnects,
      dropped_messages: this.dropped,
    };
  }

  private connect() {
    if (this.closed) return;
    const { host, port, secure } = this.target;
    const socket = secure
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ...this.opts.tls })
      : net.connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    const deframer = new Deframer();
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      this.log('info', 'acquirer link connected');
      void this.signOn(socket);
    });
    socket.on('data', (chunk) => {
      this.lastTraffic = Date.now();
      let bodies: Buffer[];
      try {
        bodies = deframer.push(chunk);
      } catch (err) {
        // the stream cannot be cut into messages any more: start over on a new connection
        this.dropped++;
        this.log('warn', 'acquirer link: broken stream, reconnecting', { error: (err as Error).message });
        socket.destroy();
        return;
      }
      for (const body of bodies) this.receive(body);
    });
    socket.on('error', (err) => this.log('warn', 'acquirer link error', { error: err.message }));
    socket.on('close', () => this.lost(socket));
  }

  private receive(body: Buffer) {
    let m: Message;
    try {
      m = decode(body, this.layout);
    } catch (err) {
      this.dropped++;
      this.log('warn', 'acquirer link: dropped a malformed message', { error: (err as Error).message });
      return;
    }
    const key = this.keyOf(m);
    const p = this.pending.get(key);
    if (!p || answerMti(p.mti) !== m.mti) {
      // an answer nobody waits for: late (after its timeout), doubled, or never asked
      this.dropped++;
      this.log('warn', 'acquirer link: dropped an answer to no pending request', { mti: m.mti, stan: m.fields[11] });
      return;
    }
    this.pending.delete(key);
    clearTimeout(p.timer);
    p.resolve(m);
  }

  /** Network messages are keyed apart ('~'): they carry no terminal. */
  private keyOf(m: Message) {
    const terminal = (m.fields[41] ?? '').trimEnd();
    return m.mti.startsWith('08') ? `~${m.fields[11]}` : `${terminal}|${m.fields[11]}`;
  }

  private lost(socket: net.Socket) {
    if (this.socket !== socket) return;
    const wasUp = this.signedOn;
    this.signedOn = false;
    this.socket = undefined;
    // what was in flight on this connection may or may not have reached the host
    for (const [key, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new LinkUnknown('the connection to the acquirer was lost before the answer came'));
      this.pending.delete(key);
    }
    if (this.closed) return;
    if (wasUp) this.log('warn', 'acquirer link lost, reconnecting');
    const max = this.opts.backoffMs?.[1] ?? 10_000;
    const pause = Math.min(this.backoff, max) * (0.5 + Math.random() / 2);
    this.backoff = Math.min(this.backoff * 2, max);
    this.reconnects++;
    this.reconnectTimer = setTimeout(() => this.connect(), pause);
    this.reconnectTimer.unref();
  }

  private network(info: string): Message {
    this.networkStan = (this.networkStan % 999_999) + 1;
    return { mti: '0800', fields: { 7: transmissionTime(new Date()), 11: String(this.networkStan).padStart(6, '0'), 70: info } };
  }

  private async signOn(socket: net.Socket) {
    try {
      const a = await this.exchange(this.network(NETWORK.signOn), socket);
      if (a.fields[39] !== '00') throw new Error(`sign-on refused (${a.fields[39]})`);
      this.signedOn = true;
      this.backoff = this.opts.backoffMs?.[0] ?? 100;
      this.lastEcho = new Date();
      this.log('info', 'acquirer link signed on');
      this.waitingForSignOn.splice(0).forEach((w) => w());
    } catch (err) {
      this.log('warn', 'acquirer link: sign-on failed', { error: (err as Error).message });
      socket.destroy();
    }
  }

  private echoIfIdle(echoMs: number) {
    const socket = this.socket;
    if (!socket || !this.signedOn || Date.now() - this.lastTraffic < echoMs) return;
    this.lastTraffic = Date.now();
    this.exchange(this.network(NETWORK.echo), socket).then(
      () => (this.lastEcho = new Date()),
      () => {
        this.log('warn', 'acquirer link: echo unanswered, reconnecting');
        socket.destroy();
      },
    );
  }

  private exchange(m: Message, socket: net.Socket, timeoutMs = this.timeoutMs): Promise<Message> {
    const key = this.keyOf(m);
    if (this.pending.has(key))
      return Promise.reject(new Error(`a request with STAN ${m.fields[11]} is already in flight on this terminal`));
    const bytes = frame(encode(m, this.layout));
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(key);
        reject(new LinkUnknown(`no answer from the acquirer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(key, { mti: m.mti, resolve, reject, timer });
      this.lastTraffic = Date.now();
      socket.write(bytes);
    });
  }

  /**
   * Sends a financial request and waits for its answer. Throws LinkUnknown when the answer may
   * have been lost (sent, then timeout or connection lost), a plain Error when nothing was sent
   * (the link stayed down for the whole timeout, or the message does not fit the layout).
   */
  async request(m: Message, timeoutMs = this.timeoutMs): Promise<Message> {
    encode(m, this.layout); // a message that cannot be written fails here, before anything is sent
    const deadline = Date.now() + timeoutMs;
    while (!this.signedOn || !this.socket) {
      if (this.closed) throw new Error('the acquirer link is closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('the acquirer link is down: not signed on');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waitingForSignOn.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.exchange(m, this.socket, Math.max(1, deadline - Date.now()));
  }

  async close() {
    this.closed = true;
    this.warnings.close();
    clearInterval(this.echoTimer);
    clearTimeout(this.reconnectTimer);
    this.waitingForSignOn.splice(0).forEach((w) => w());
    this.socket?.destroy();
  }
}
