/**
 * A set that keeps at most `max` members: adding one more forgets the oldest (insertion order; a
 * member added again counts as new). For bookkeeping a protocol must bound but can afford to lose
 * in the rare overflow, such as requests a client gave up on whose late grant it must release.
 */
export class BoundedSet<T> {
  private readonly members = new Set<T>();
  /** Members forgotten to stay within `max`. */
  evicted = 0;

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`BoundedSet: max must be a positive integer, got ${max}`);
  }

  get size(): number {
    return this.members.size;
  }

  add(member: T): void {
    this.members.delete(member);
    this.members.add(member);
    if (this.members.size > this.max) {
      this.members.delete(this.members.values().next().value as T);
      this.evicted++;
    }
  }

  has(member: T): boolean {
    return this.members.has(member);
  }

  delete(member: T): boolean {
    return this.members.delete(member);
  }
}
