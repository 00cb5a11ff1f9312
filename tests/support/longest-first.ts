/**
 * Vitest's order of test files, with the files known to run longest first within their project.
 * On a fresh clone vitest has no timings and starts the largest files first; a long file with a
 * small source (the libvirt driver's, which runs the shared driver suite, or the booking race)
 * then starts last, and the run ends with one worker on it while the other cores wait. Starting
 * the long ones first lets the short ones fill in beside them.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files of each project, longest first (from the run's ten slowest files). */
export const LONGEST_FIRST = [
  'server/test/fuzz.test.ts',
  'server/src/platform/hypervisor/libvirt-driver.test.ts',
  'server/src/domains/bookings/bookings-race.test.ts',
  'server/src/domains/desktops/networks.test.ts',
  'server/src/domains/desktops/libvirt-desktops.test.ts',
  'scripts/codegen/codegen.test.ts',
  'scripts/admin-cli.test.ts',
  'server/src/domains/deployments/deployments.test.ts',
  'server/test/added-field.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = new Map(base.map((spec, index) => [spec, index]));
    // Projects and their group order stay as vitest orders them.
    const groupOf = (spec: TestSpecification) =>
      `${spec.project.config.sequence.groupOrder} ${spec.project.name}`;
    const groups = new Map<string, number>();
    for (const spec of base) if (!groups.has(groupOf(spec))) groups.set(groupOf(spec), groups.size);
    const weight = (spec: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return index === -1 ? 0 : LONGEST_FIRST.length - index;
    };
    return [...base].sort(
      (a, b) =>
        (groups.get(groupOf(a)) ?? 0) - (groups.get(groupOf(b)) ?? 0) ||
        weight(b) - weight(a) ||
        (rank.get(a) ?? 0) - (rank.get(b) ?? 0),
    );
  }
}
