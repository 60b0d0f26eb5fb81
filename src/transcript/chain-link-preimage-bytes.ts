import { type ChainBinding, createChainLinkPreimage, type EncodedChainLink } from "./chain-link-hash.js";

/** The members of an encoded link, in the order the preimage spells them. */
export type ChainLinkMember = keyof EncodedChainLink;

/**
 * The link preimage of one run as constant byte segments between member texts: preimage = segments[0],
 * members[0], segments[1], ..., members[n - 1], segments[n]. Taken from `createChainLinkPreimage` itself, with
 * a marker in place of each member, so that the bytes a verifier assembles can never drift from the formula.
 */
export interface ChainLinkPreimageTemplate {
  readonly segments: readonly Uint8Array[];
  readonly members: readonly ChainLinkMember[];
}

const memberNames: readonly ChainLinkMember[] = [
  "prev",
  "state",
  "action_hash",
  "result_hash",
  "model_fingerprint",
  "seq",
  "step_id",
  "turn",
  "timestamp",
];

export function createChainLinkPreimageTemplate(binding: ChainBinding): ChainLinkPreimageTemplate {
  // Raw control characters: the run's constants are JSON-encoded, which escapes them, so a marker cannot occur
  // anywhere else in the text.
  const marker = (index: number): string => `\u0001${String.fromCharCode(0x10 + index)}\u0001`;
  const link = Object.fromEntries(memberNames.map((name, index) => [name, marker(index)])) as Record<
    ChainLinkMember,
    string
  >;
  const text = createChainLinkPreimage(binding)(link);
  const encoder = new TextEncoder();
  const segments: Uint8Array[] = [];
  const members: ChainLinkMember[] = [];
  let position = 0;
  for (;;) {
    const found = text.indexOf("\u0001", position);
    if (found === -1) break;
    const member = memberNames[text.charCodeAt(found + 1) - 0x10] as ChainLinkMember;
    segments.push(encoder.encode(text.slice(position, found)));
    members.push(member);
    position = found + marker(0).length;
  }
  segments.push(encoder.encode(text.slice(position)));
  return { segments, members };
}
