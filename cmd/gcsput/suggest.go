package main

import (
	"flag"
	"strings"

	cliflags "github.com/gcsput/gcsput/internal/cli/flags"
)

// The "did you mean" of every unknown command and flag is decided by one rule,
// cliflags.Nearest; here are its candidates.

// commandSuggestion is the hint for an unknown command word: gcsput's spelling of a
// gsutil or gcloud command, or the nearest command name; "" when nothing is near.
func commandSuggestion(word string) string {
	if s, ok := otherSpellings[word]; ok {
		return s
	}
	var names []string
	for _, c := range commands() {
		first, _, _ := strings.Cut(c.name, " ")
		names = append(names, first)
		names = append(names, c.aliases...)
	}
	names = append(names, "help", "version")
	if n := cliflags.Nearest(word, names); n != "" {
		return "did you mean \"" + n + "\"?"
	}
	return ""
}

// otherSpellings answers the gsutil and gcloud storage commands that gcsput spells
// another way (docs/gsutil.md has the whole table).
var otherSpellings = map[string]string{
	"setmeta": `gsutil's setmeta is "gcsput meta set"`,
	"objects": `gcloud storage objects describe is "gcsput stat", objects update is "gcsput meta set", objects list is "gcsput ls"`,
	"storage": `gcsput takes gcloud storage's commands without "storage": "gcsput cp", "gcsput rsync", "gcsput ls"`,
}

// flagSuggestion is "; did you mean --delete?" for an unknown flag name (without its
// dashes), from the long names defined on f; "" when nothing is near. A one-letter flag
// gets none: -Q is not a misspelt word, and the nearest letter would be a guess.
func (f *flagSet) flagSuggestion(name string) string {
	if len(name) < 2 {
		return ""
	}
	var names []string
	f.fs.VisitAll(func(fl *flag.Flag) {
		if len(fl.Name) > 1 {
			names = append(names, fl.Name)
		}
	})
	if n := cliflags.Nearest(name, names); n != "" {
		return "; did you mean --" + n + "?"
	}
	return ""
}
