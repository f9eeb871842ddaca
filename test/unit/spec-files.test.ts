import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SpecError, parseIntervention, setSpecFileReader } from "../../core/specs/grammar";
import { allowSpecFiles } from "../../core/specs/files";
// importing what applies edits (and the SDK that imports it) must not give the grammar a reader
import "../../core/specs/apply";
import "../../core/sdk/runtime";

describe("replace:…=@FILE reads a file only where a host allowed it", () => {
  afterEach(() => setSpecFileReader(undefined));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cw-specfile-")), "clean.txt");
  fs.writeFileSync(file, "sanitized text");

  it("is refused when nothing set a reader, even with the appliers and the SDK imported", () => {
    expect(() => parseIntervention(`replace:input:notes=@${file}`)).toThrow(SpecError);
    expect(() => parseIntervention(`replace:input:notes=@${file}`)).toThrow(/can't be read here/);
    // an inline replacement needs no reader
    expect(parseIntervention("replace:input:notes=inline").edit).toMatchObject({ kind: "replace", text: "inline" });
  });

  it("reads the file once the host allows it, and not after the reader is taken away", () => {
    allowSpecFiles();
    expect(parseIntervention(`replace:input:notes=@${file}`).edit).toMatchObject({ kind: "replace", text: "sanitized text", file });
    expect(() => parseIntervention(`replace:input:notes=@${file}.missing`)).toThrow(/cannot read/);
    setSpecFileReader(undefined);
    expect(() => parseIntervention(`replace:input:notes=@${file}`)).toThrow(/can't be read here/);
  });

  it("uses the reader the host gave, not the disk", () => {
    const asked: string[] = [];
    setSpecFileReader((f) => (asked.push(f), "from the host"));
    expect(parseIntervention("replace:input:notes=@anything.txt").edit).toMatchObject({ text: "from the host" });
    expect(asked).toEqual(["anything.txt"]);
  });
});
