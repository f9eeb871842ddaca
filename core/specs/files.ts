/**
 * The Node reader of `replace:…=@FILE` files, for hosts that let their user name files (see
 * setSpecFileReader in grammar.ts). A path is read relative to the working directory; a file over
 * 8 MB is refused.
 */
import fs from "node:fs";
import { setSpecFileReader, type SpecFileReader } from "./grammar";

const MAX_SPEC_FILE = 8 << 20;

export const readSpecFileFromDisk: SpecFileReader = (file) => {
  const st = fs.statSync(file);
  if (st.size > MAX_SPEC_FILE) throw new Error("over 8 MB");
  return fs.readFileSync(file, "utf8");
};

/** Lets `replace:…=@FILE` specs read files from this process's disk (a host's explicit choice). */
export function allowSpecFiles(): void {
  setSpecFileReader(readSpecFileFromDisk);
}
