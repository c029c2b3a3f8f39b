/** Who issues a command and when; filled by the adapter so deciders stay pure. */
export interface CommandMetadata {
  /** ISO time of the command. */
  now: string;
  actorId: string;
  actorName: string;
}

/** A command as deciders receive it: its data plus the caller's metadata. */
export interface Command<Type extends string, Data> {
  type: Type;
  data: Data;
  metadata: CommandMetadata;
}
