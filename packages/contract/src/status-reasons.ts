/**
 * What a machine's `statusReason` code means, in a sentence for the person who sees it (the
 * dashboard shows it beside the code; the API's description of `statusReason` lists them). A
 * code without a sentence is shown as it is.
 */
export const STATUS_REASON_SENTENCES: Readonly<Record<string, string>> = {
  image_unavailable:
    'This host has no image of the chosen OS, so nothing was made. Its operator adds the Debian images with `sudo npm run admin -- images build` and the others with `sudo npm run admin -- images sync`; meanwhile, destroy this VM and create one with an image the form offers.',
  restore_failed:
    'The last restore from a snapshot failed on every try, and the machine stayed stopped. Restore it again, or start the machine to see what its disk holds; if it fails again, ask the operator.',
};

/** The sentence for a `statusReason` code, if it has one. */
export const statusReasonSentence = (reason: string | null | undefined): string | undefined =>
  reason ? STATUS_REASON_SENTENCES[reason] : undefined;

/** The description of `statusReason` in the API's schemas: what it is, and the codes' sentences. */
export const STATUS_REASON_DESCRIPTION = [
  'Why the machine is in `error`, as a code, e.g. `provisioning_timeout`, `start_failed`, `image_unavailable`; on a stopped machine, `restore_failed` until its next move or restore; `null` otherwise.',
  ...Object.entries(STATUS_REASON_SENTENCES).map(([code, sentence]) => `\`${code}\`: ${sentence}`),
].join(' ');
