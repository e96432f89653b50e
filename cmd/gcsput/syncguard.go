package main

import (
	"fmt"

	"github.com/gcsput/gcsput/upload"
)

// sync --delete's guard is the library's (upload.DeleteGuardError), and so is
// reading its flag (upload.ParseMaxDelete); here is its message in the command's words.

// guardMessage is the delete guard's refusal with the flags that answer it:
// --max-delete, --dry-run, and the command that empties the destination on
// purpose (there is no flag for that).
func guardMessage(e *upload.DeleteGuardError) string {
	const head = "refusing to sync --delete: "
	srcNoun, dstNoun, empty := "file", "object", "gcsput rm -r "+e.Dest.String()
	if !e.Dest.IsRemote() {
		srcNoun, dstNoun, empty = "object", "file", "rm -r "+e.Dest.String()
	}
	switch e.Reason {
	case upload.GuardEmptySource:
		what := "no " + srcNoun + "s"
		if e.Filtered {
			what += " that --include/--exclude take"
		}
		return head + fmt.Sprintf("the source %s holds %s, so %s of %s would be deleted; "+
			"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. "+
			"To empty %s on purpose, run '%s'", e.Source, what, e.All(), e.Dest, e.Dest, empty)
	case upload.GuardNoSharedPath:
		return head + fmt.Sprintf("%s of %s would be deleted: %s and %s share no path, "+
			"as when one of them is mistyped. Nothing was changed. Check that %s is the source you mean ('--dry-run' lists the deletes); "+
			"if they are meant, run again with '--max-delete %d' (or '--max-delete 100%%')",
			e.All(), e.Dest, e.Source, e.Dest, e.Source, e.Deletes)
	}
	return head + fmt.Sprintf("%d of the %s of %s (%d%%) would be deleted, more than --max-delete allows (%s). "+
		"Nothing was changed. Check that %s is the source you mean ('--dry-run' lists the deletes); "+
		"if they are meant, run again with '--max-delete %d' (or '--max-delete 100%%')",
		e.Deletes, plural(e.DestEntries, dstNoun), e.Dest, e.Percent(), e.Limit, e.Source, e.Deletes)
}
