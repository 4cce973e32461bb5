/**
 * Seeds for a property test: FC_SEED alone when set (to replay a run), otherwise the test's pinned
 * seed plus `fresh` seeds new to this run, so CI explores new cases on every run while the pinned
 * case stays. Put the seed in each test's title: a failure then names the seed that replays it
 * (`FC_SEED=<seed> bun test <file>`), besides fast-check's own report of the seed and shrunk case.
 */
export function propertySeeds(pinned: number, fresh = 3): number[] {
  const given = process.env.FC_SEED;
  if (given !== undefined && given !== "") return [Number(given)];
  const random = crypto.getRandomValues(new Int32Array(fresh));
  return [pinned, ...random];
}
