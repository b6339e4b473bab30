import type { MachineLimits, Size, SizeSpecs } from '@svc/contract';

/** RAM in MiB as people read it: whole or one-decimal GiB from 1 GiB up. */
export const formatRam = (mb: number): string =>
  mb >= 1024 ? `${Number((mb / 1024).toFixed(1))} GiB` : `${mb} MiB`;

/** Whether the machine's actual limits are other than its size's specs (RAM GB read as GiB). */
export const limitsDiffer = (specs: SizeSpecs, limits: MachineLimits | undefined) =>
  limits !== undefined &&
  (limits.vcpu !== specs.vcpu ||
    limits.ramMb !== specs.ramGb * 1024 ||
    limits.diskGb !== specs.diskGb);

/**
 * A machine's size as sold (`small: 2 vCPU, 4 GB RAM, 80 GB disk`) and, where its driver gives
 * it other limits (a small host running machines scaled down), what it has here beside it.
 */
export function MachineSize(props: {
  size: Size;
  specs: SizeSpecs;
  limits?: MachineLimits | undefined;
}) {
  const { size, specs, limits } = props;
  return (
    <>
      {size}: {specs.vcpu} vCPU, {specs.ramGb} GB RAM, {specs.diskGb} GB disk
      {limits && limitsDiffer(specs, limits) && (
        <>
          {' '}
          <span className="muted" data-testid="machine-limits">
            ({limits.vcpu} vCPU, {formatRam(limits.ramMb)} RAM, {limits.diskGb} GiB disk here)
          </span>
        </>
      )}
    </>
  );
}
