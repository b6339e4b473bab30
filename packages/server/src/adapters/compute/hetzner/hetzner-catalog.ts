import { type Region, SIZE_SPECS, type Size } from '@svc/contract';

/** A server type as `GET /server_types` describes it (the fields the choice reads). */
export interface ServerType {
  readonly id: number;
  readonly name: string;
  readonly cores: number;
  readonly memory: number;
  readonly disk: number;
  readonly cpu_type: 'shared' | 'dedicated';
  readonly architecture: 'x86' | 'arm';
  readonly deprecated: boolean | null;
  readonly locations: readonly {
    readonly name: string;
    readonly deprecation: { readonly unavailable_after: string } | null;
  }[];
}

/** The server type of every size in every region. */
export type SizeTable = Readonly<Record<Size, Readonly<Record<Region, string>>>>;

/** Rows of the spec's size table, by size and region (vCPUs, GB of memory and of disk). */
const ROWS = SIZE_SPECS;

/**
 * The smallest x86 server type sold in `location` that meets a row of the size table: fewest
 * cores, then least memory, then least disk, shared vCPUs before dedicated ones. `undefined`
 * when none does (the operator must name one).
 */
export function smallestTypeFor(
  types: readonly ServerType[],
  location: string,
  row: { readonly vcpu: number; readonly ramGb: number; readonly diskGb: number },
): ServerType | undefined {
  const candidates = types.filter(
    (type) =>
      type.architecture === 'x86' &&
      type.locations.some((l) => l.name === location && !l.deprecation) &&
      type.cores >= row.vcpu &&
      type.memory >= row.ramGb &&
      type.disk >= row.diskGb,
  );
  const order = (type: ServerType) => [
    type.cores,
    type.memory,
    type.disk,
    type.cpu_type === 'shared' ? 0 : 1,
  ];
  return candidates.sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    const differs = x.findIndex((value, i) => value !== y[i]);
    return differs === -1 ? 0 : (x[differs] as number) - (y[differs] as number);
  })[0];
}

/**
 * The size table from Hetzner's catalog: each cell the operator named (`HCLOUD_SERVER_TYPES`)
 * or else the smallest type that meets the spec's row in the region's location. Returns the
 * cells no type meets as problems.
 */
export function sizeTable(
  types: readonly ServerType[],
  locations: Readonly<Record<Region, string>>,
  named: Readonly<Partial<Record<`${Size}-${Region}`, string>>> = {},
): { table: SizeTable; problems: string[] } {
  const problems: string[] = [];
  const table = {} as Record<Size, Record<Region, string>>;
  for (const size of Object.keys(ROWS) as Size[]) {
    table[size] = {} as Record<Region, string>;
    for (const region of Object.keys(locations) as Region[]) {
      const chosen =
        named[`${size}-${region}`] ??
        smallestTypeFor(types, locations[region], ROWS[size][region])?.name;
      if (chosen) table[size][region] = chosen;
      else {
        problems.push(
          `no server type in ${locations[region]} meets ${size} (${JSON.stringify(ROWS[size][region])})`,
        );
      }
    }
  }
  return { table, problems };
}
