/**
 * Where the extension keeps the user's approvals of replay programs: its workspace state (VS Code's
 * own storage for this workspace, which no file in the folder can write). Rules: logic/approvals.ts.
 */
import type * as vscode from "vscode";
import { parseApprovals, withApproval, type StoredApproval } from "./logic/approvals";

const KEY = "causeway.programApprovals";

export class ProgramApprovals {
  constructor(private readonly state: vscode.Memento) {}

  list(): StoredApproval[] {
    return parseApprovals(this.state.get<unknown>(KEY));
  }

  async approve(a: StoredApproval): Promise<void> {
    await this.state.update(KEY, withApproval(this.list(), a));
  }

  async forgetAll(): Promise<void> {
    await this.state.update(KEY, undefined);
  }
}
