// When a rate-limit command counts as late, and when as unanswered (docs/reliability.md §Redis).
// Unanswered by the ceiling (REDIS_COMMAND_TIMEOUT_MS), it means a silent Redis. Before that it is
// late once past a deadline that follows how fast Redis has been answering: the smoothed round trip
// and four times its mean deviation, as TCP sets its retransmission timeout (RFC 6298), between a
// floor of a few milliseconds and the ceiling. A late command's requests that Redis last said it
// would refuse are refused then (shared.ts), so a near Redis that falls silent costs those the
// floor; on a machine so busy that answers are read tens of milliseconds late, the deadline grows
// with them.

/** The error of a command unanswered by the ceiling: Redis is taken for silent. */
export class CommandUnanswered extends Error {
  constructor(ms: number) {
    super(`Redis command unanswered after ${Math.round(ms)} ms`);
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
   * `p`'s outcome, or CommandUnanswered when it has none by the ceiling, after `silent` is called.
   * `late` is called once when `p` has no answer by the deadline: the caller may then decide what
   * it can without the answer, which still counts when it comes. Both are judged after the event
   * loop's next poll for I/O: a timer fires before the loop reads its sockets, so on a busy loop a
   * reply that came in time but was not read yet would otherwise count as late.
   */
  within<T>(p: Promise<T>, late: () => void, silent: () => void): Promise<T> {
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
    const unanswered = new Promise<never>((_, reject) => {
      const atCeiling = () => {
        // The silence is told first, so the requests decided on the rejection already see it.
        silent();
        reject(new CommandUnanswered(this.#ceiling));
      };
      if (ms >= this.#ceiling) judge(ms, atCeiling);
      else
        judge(ms, () => {
          late();
          judge(this.#ceiling, atCeiling);
        });
    });
    const out = Promise.race([answered, unanswered]);
    const stop = () => clearTimeout(timer);
    answered.then(stop, stop);
    return out;
  }
}
