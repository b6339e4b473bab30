import { OsImageKey, Region, Size } from '@svc/contract';

/**
 * One cell of the warm pool: machines of one kind, image, size and region kept booted and
 * unclaimed, `count` of them. A create that matches a cell takes one instead of launching.
 */
export type WarmPoolCell =
  | {
      readonly kind: 'plain_vm';
      readonly image: OsImageKey;
      readonly size: Size;
      readonly region: Region;
      readonly count: number;
    }
  | {
      readonly kind: 'agent';
      readonly size: Size;
      readonly region: Region;
      readonly count: number;
    };

const EXAMPLE = 'plain_vm:debian-12:small:eu=2,agent:small:eu=1';
/** A bound on each cell: every member holds memory and an address on the bridge. */
const MAX_PER_CELL = 50;

/** The cell's name as the pool and the operator see it: `plain_vm:debian-12:small:eu`. */
export const cellName = (cell: WarmPoolCell): string =>
  cell.kind === 'agent'
    ? `agent:${cell.size}:${cell.region}`
    : `plain_vm:${cell.image}:${cell.size}:${cell.region}`;

function parseCell(entry: string): WarmPoolCell | string {
  const [name = '', countText, ...rest] = entry.split('=').map((part) => part.trim());
  const count = Number(countText);
  if (rest.length > 0 || !/^\d+$/.test(countText ?? '') || count > MAX_PER_CELL) {
    return `"${entry}" is not cell=count with a count from 0 to ${MAX_PER_CELL}; for example ${EXAMPLE}`;
  }
  const parts = name.split(':');
  const [kind] = parts;
  const [image, size, region] = kind === 'agent' ? [undefined, ...parts.slice(1)] : parts.slice(1);
  const expected = kind === 'agent' ? 3 : 4;
  const sizeOk = Size.safeParse(size);
  const regionOk = Region.safeParse(region);
  if ((kind !== 'agent' && kind !== 'plain_vm') || parts.length !== expected) {
    return `"${name}" is not agent:<size>:<region> or plain_vm:<image>:<size>:<region>; for example ${EXAMPLE}`;
  }
  if (!sizeOk.success) return `"${size}" in "${name}" is not a size (${Size.options.join(', ')})`;
  if (!regionOk.success) {
    return `"${region}" in "${name}" is not a region (${Region.options.join(', ')})`;
  }
  if (kind === 'agent') return { kind, size: sizeOk.data, region: regionOk.data, count };
  const imageOk = OsImageKey.safeParse(image);
  if (!imageOk.success) {
    return `"${image}" in "${name}" is not an OS image (${OsImageKey.options.join(', ')})`;
  }
  return { kind, image: imageOk.data, size: sizeOk.data, region: regionOk.data, count };
}

/**
 * `INCUS_WARM_POOL`: the cells to keep ready, `cell=count` separated by commas. Empty: no pool
 * (every create launches). Answers the problem in words for a malformed list.
 */
export function parseWarmPool(raw: string): WarmPoolCell[] | string {
  const cells: WarmPoolCell[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (!entry) continue;
    const cell = parseCell(entry);
    if (typeof cell === 'string') return cell;
    if (cells.some((other) => cellName(other) === cellName(cell))) {
      return `${cellName(cell)} is named twice`;
    }
    if (cell.count > 0) cells.push(cell);
  }
  return cells;
}
