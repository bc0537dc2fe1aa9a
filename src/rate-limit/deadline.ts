// How long a rate-limit command may go unanswered (docs/reliability.md §Redis). A silent Redis costs
// each request waiting on it the whole deadline, so the deadline follows how fast Redis has been
// answering: the smoothed round trip and four times its mean deviation, as TCP sets its
// retransmission timeout (RFC 6298), between a floor of a few milliseconds and a ceiling
// (REDIS_COMMAND_TIMEOUT_MS). Near and answering promptly, a Redis that falls silent costs a
// request the floor; on a machine so busy that answers are read tens of milliseconds late, the
// deadline grows with them instead of taking every late answer for a silence.

/** The error of a command not answered in time. */
export class CommandLate extends Error {
  constructor(ms: number) {
    super(`Redis command timed out after ${Math.round(ms)} ms`);
  }
}

/** The deadline never goes below this. */
export const FLOOR_MS = 5;

export class CommandDeadline {
  readonly #ceiling: number;
  readonly #floor: number;
  #srtt: number | undefined;
  #rttvar = 0;

  constructor(ceilingMs: number, floorMs = FLOOR_MS) {
    this.#ceiling = ceilingMs;
    this.#floor = Math.min(floorMs, ceilingMs);
  }

  /** The deadline of the next command, in ms. */
  get ms(): number {
    if (this.#srtt === undefined) return this.#ceiling;
    return Math.min(this.#ceiling, Math.max(this.#floor, this.#srtt + 4 * this.#rttvar));
  }

  /** A command was answered `rtt` ms after it was sent (RFC 6298 §2, with its gains 1/8 and 1/4). */
  answered(rtt: number): void {
    if (this.#srtt === undefined) {
      this.#srtt = rtt;
      this.#rttvar = rtt / 2;
      return;
    }
    this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - rtt);
    this.#srtt = 0.875 * this.#srtt + 0.125 * rtt;
  }

  /**
   * `p`, or CommandLate when it has no answer by the deadline; `silent` is called when it has none
   * by the ceiling either. Both are judged after the event loop's next poll for I/O: a timer fires
   * before the loop reads its sockets, so on a busy loop a reply that came in time but was not read
   * yet would otherwise count as late. An answer after the deadline is read and dropped; its time
   * still counts towards the next deadlines.
   */
  within<T>(p: Promise<T>, silent: () => void): Promise<T> {
    const ms = this.ms;
    const sent = performance.now();
    let done = false;
    const answered = p.then(
      (v) => {
        done = true;
        this.answered(performance.now() - sent);
        return v;
      },
      (err: unknown) => {
        done = true;
        throw err;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    // One timer at a time: the ceiling's is set only once the deadline has passed unanswered.
    const judge = (at: number, then: () => void) => (timer = setTimeout(() => setImmediate(() => done || then()), at - (performance.now() - sent)));
    const late = new Promise<never>((_, reject) => {
      judge(ms, () => {
        // At the ceiling the silence is told first, so the late requests already see it.
        if (ms >= this.#ceiling) silent();
        else judge(this.#ceiling, silent);
        reject(new CommandLate(ms));
      });
    });
    const out = Promise.race([answered, late]);
    const stop = () => clearTimeout(timer);
    answered.then(stop, stop);
    return out;
  }
}
