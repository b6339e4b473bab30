import { type Product, type Region, SIZE_ORDER } from '@svc/contract';
import { TableScroll } from '../../components/TableScroll.js';
import type { Prices } from '../../modules/prices.js';
import { REGION_NAMES } from '../../modules/SizeSpecs.js';

const PRODUCTS: Record<Product, string> = { agent: 'Agent', plain_vm: 'Plain VM' };

/** The monthly price of one slot of every product and size (rows) in every region (columns). */
export function SlotPriceTable({ prices }: { prices: Prices }) {
  const regions = Object.keys(REGION_NAMES) as Region[];
  return (
    <TableScroll label="Slot prices">
      <table aria-label="Slot prices">
        <caption className="hint">One slot, a month</caption>
        <thead>
          <tr>
            <th scope="col">Slot</th>
            {regions.map((region) => (
              <th scope="col" key={region}>
                {REGION_NAMES[region]}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(Object.keys(PRODUCTS) as Product[]).flatMap((product) =>
            SIZE_ORDER.map((size) => (
              <tr key={`${product}-${size}`}>
                <th scope="row">
                  {PRODUCTS[product]} {size}
                </th>
                {regions.map((region) => {
                  const cell = prices.cell(product, size, region);
                  return <td key={region}>{cell ? prices.money(cell.monthly) : '—'}</td>;
                })}
              </tr>
            )),
          )}
        </tbody>
      </table>
    </TableScroll>
  );
}
