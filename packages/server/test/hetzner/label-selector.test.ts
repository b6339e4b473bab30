import { describe, expect, it } from 'vitest';
import { HetznerError } from './errors.js';
import { parseLabelSelector, validateLabels } from './label-selector.js';

const LABELS = { env: 'prod', 'svc/machine': 'm1', tier: 'web' };

describe('label selectors', () => {
  it.each([
    ['env=prod', true],
    ['env==prod', true],
    ['env=test', false],
    ['env!=test', true],
    ['env!=prod', false],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['env in (test,prod)', true],
    ['env in (test, staging)', false],
    ['env notin (test,staging)', true],
    ['env notin (prod)', false],
    ['svc/machine=m1', true],
    ['env=prod,tier=web', true],
    ['env in (prod,test),!missing,tier!=db', true],
    ['env=prod,tier=db', false],
  ])('%s → %s', (selector, expected) => {
    expect(parseLabelSelector(selector)(LABELS)).toBe(expected);
  });

  it.each(['env===prod', 'env in prod', '', 'a b'])('refuses %j with 422', (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(HetznerError);
  });

  it('validates labels as Hetzner does', () => {
    expect(validateLabels({ 'example.com/my': 'label', 'just-a-key': '' })).toEqual({
      'example.com/my': 'label',
      'just-a-key': '',
    });
    for (const bad of [
      { 'hetzner.cloud/x': 'y' },
      { ['k'.repeat(64)]: 'v' },
      { k: 'v'.repeat(64) },
      { '-k': 'v' },
      { k: 'v v' },
    ])
      expect(() => validateLabels(bad), JSON.stringify(bad)).toThrow(HetznerError);
  });
});
