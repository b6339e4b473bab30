import axe from 'axe-core';
import type { Page } from 'playwright-core';

export interface Violation {
  readonly rule: string;
  readonly help: string;
  readonly targets: string[];
}

/** axe-core's WCAG and best-practice rules over the whole document, violations only. */
export async function violationsOf(page: Page): Promise<Violation[]> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) does not apply.
  await page.evaluate(axe.source);
  return page.evaluate(async () => {
    const inPage = globalThis as unknown as { axe: typeof axe };
    const result = await inPage.axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      rule: v.id,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
}

/** The violations as lines (`rule (help) at targets`), empty when there are none. */
export async function violationLines(page: Page): Promise<string[]> {
  return (await violationsOf(page)).map((v) => `${v.rule} (${v.help}) at ${v.targets.join(', ')}`);
}
