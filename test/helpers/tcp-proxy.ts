/**
 * A TCP proxy between a daemon and Postgres that can swallow the server's
 * answers, cut every connection, or let the open ones go silent: the way to
 * make "Postgres committed, then the answer was lost" and "a half-open
 * connection" (no reset, nothing answers) happen on purpose.
 */
import net from 'node:net';

export class TcpProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket; silent: boolean }>();
  /** While set, bytes from the server are dropped (the client never hears back). */
  private swallowing = false;
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = net.createServer((client) => {
      const upstream = net.connect({ host: this.targetHost, port: this.targetPort });
      const pair = { client, upstream, silent: false };
      this.pairs.add(pair);
      client.on('data', (d) => {
        if (!pair.silent) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!this.swallowing && !pair.silent) client.write(d);
      });
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('close', end);
      upstream.on('close', end);
      client.on('error', end);
      upstream.on('error', end);
    });
  }

  static async start(target: string): Promise<TcpProxy> {
    const [host, port] = target.split(':');
    const p = new TcpProxy(host, Number(port));
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  /** From now on the server's answers are dropped. */
  swallowAnswers(): void {
    this.swallowing = true;
  }

  /**
   * Every connection open now goes silent both ways and stays open (as after
   * a NAT or firewall forgot it): nothing sent on it arrives, no reset comes.
   * New connections work. Returns how many went silent.
   */
  silenceOpen(): number {
    for (const pair of this.pairs) pair.silent = true;
    return this.pairs.size;
  }

  /** Cuts every open connection and lets answers through again (new connections work). */
  cutAll(): number {
    const n = this.pairs.size;
    for (const { client, upstream } of [...this.pairs]) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    this.swallowing = false;
    return n;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
