import {
  canApply,
  type MachineState,
  type Product,
  type Region,
  SIZE_ORDER,
  SIZE_SPECS,
  type Size,
} from '@svc/contract';
import { useId, useState } from 'react';
import { usePrices } from './prices.js';
import { describeSize } from './SizeSpecs.js';
import type { MachineKind } from './unavailable.js';

/**
 * Resize beside Stop: the sizes with their specs and prices as the create forms show them,
 * enabled only on a stopped machine. Sizes with a smaller disk are offered disabled: a disk only
 * grows (the service answers `disk_shrink`).
 */
export function ResizeControl(props: {
  kind: MachineKind;
  status: MachineState;
  product: Product;
  size: Size;
  region: Region;
  pending: boolean;
  onResize: (size: Size) => void;
}) {
  const [choice, setChoice] = useState<Size>(props.size);
  const prices = usePrices();
  const reasonId = useId();
  const stopped = canApply('resize', props.status);
  const disk = (size: Size) => SIZE_SPECS[size][props.region].diskGb;
  const price = (size: Size) => {
    const cell = prices?.cell(props.product, size, props.region);
    return cell ? ` — ${prices?.metered(cell)}` : '';
  };
  return (
    <>
      <div className="actions">
        <label>
          Size{' '}
          <select
            value={choice}
            disabled={!stopped || props.pending}
            onChange={(e) => setChoice(e.target.value as Size)}
          >
            {SIZE_ORDER.map((size) => (
              <option key={size} value={size} disabled={disk(size) < disk(props.size)}>
                {describeSize(size, props.region)}
                {price(size)}
              </option>
            ))}
          </select>
        </label>{' '}
        <button
          type="button"
          disabled={!stopped || props.pending || choice === props.size}
          aria-describedby={stopped ? undefined : reasonId}
          onClick={() => props.onResize(choice)}
        >
          {props.pending ? 'Resizing…' : 'Resize'}
        </button>
      </div>
      {!stopped && (
        <p className="hint" id={reasonId}>
          Resize needs a stopped {props.kind}.
        </p>
      )}
    </>
  );
}
