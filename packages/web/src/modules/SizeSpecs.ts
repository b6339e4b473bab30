import { type Region, SIZE_SPECS, type Size } from '@svc/contract';

export const describeSize = (size: Size, region: Region): string => {
  const spec = SIZE_SPECS[size][region];
  return `${size} — ${spec.vcpu} vCPU, ${spec.ramGb} GB RAM, ${spec.diskGb} GB disk`;
};

export const REGION_NAMES: Record<Region, string> = { us: 'United States', eu: 'Europe' };
