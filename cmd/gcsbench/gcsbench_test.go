package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for gcsbench as the child process:
// the harness re-executes os.Executable() with childCommand.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childCommand {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tableRow is one parsed row of the Markdown table.
type tableRow struct {
	mbps, filesps, cpu, rss float64
	xLoop, xOfficial        string
}

// parseTable reads the rows of the results table, keyed by
// "scenario op client".
func parseTable(t *testing.T, out string) map[string]tableRow {
	t.Helper()
	rows := map[string]tableRow{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 12 || strings.TrimSpace(f[1]) == "scenario" || strings.HasPrefix(strings.TrimSpace(f[1]), "---") {
			continue
		}
		num := func(i int) float64 {
			v, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
			if err != nil {
				t.Fatalf("row %q: column %d: %v", line, i, err)
			}
			return v
		}
		key := strings.Join([]string{strings.TrimSpace(f[1]), strings.TrimSpace(f[2]), strings.TrimSpace(f[3])}, " ")
		rows[key] = tableRow{mbps: num(4), filesps: num(5), cpu: num(6), rss: num(7),
			xLoop: strings.TrimSpace(f[9]), xOfficial: strings.TrimSpace(f[10])}
	}
	return rows
}

// TestQuick runs the whole harness in -quick mode with the Go clients: each
// moves real bytes through fakegcs (the harness checks them), and the table
// has a row with sane figures for each. No timing is asserted.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark harness end to end")
	}
	t.Parallel()
	var goClients []string
	for _, c := range clients() {
		if c.name != clientGcloud && c.name != clientRclone {
			goClients = append(goClients, c.name)
		}
	}
	// Random faults at 5 % rarely fire on 16 MiB, so the backoffs of the
	// fixed ones do not lengthen this test: TestFixedFaults has them.
	out := runQuick(t, "-clients", strings.Join(goClients, ","), "-fault-mode", "random")
	rows := parseTable(t, out)
	for _, c := range []string{clientGcsput, clientOfficial, clientOfficialSingle, clientHTTP} {
		if _, ok := rows["small-p32 upload "+c]; !ok {
			t.Errorf("no row for %s", c)
		}
	}
	checkRows(t, rows, []string{"large", "small-p1", "small-p8", "small-p32", "faults", "capped"}, goClients)
	for _, op := range []string{opUpload, opDownload} {
		if _, ok := rows["large "+op+" "+clientHTTPCRC]; !ok {
			t.Errorf("no large %s row for %s", op, clientHTTPCRC)
		}
	}
	for _, target := range []string{"large upload: gcsput ≥ 1.0× official", "small-p32 upload: gcsput peak RSS ≤ 128 MiB",
		"faults upload: bytes fakegcs received ≤ size + one chunk per fault", "large upload: gcsput ≥ 0.9× http-crc",
		"small-p32 download: gcsput ≥ 0.7× loopback", "faults download: gcsput ≥ 1.0× official",
		fmt.Sprintf("capped upload: gcsput ≥ 0.8× min(%d slices × cap, gcsput uncapped)", cappedSlices)} {
		if !strings.Contains(out, "PASS "+target) && !strings.Contains(out, "FAIL "+target) {
			t.Errorf("target %q not judged", target)
		}
	}
}

// TestFixedFaults runs the faults scenario with its fixed faults on 8 MiB
// in 1 MiB chunks (a resumable upload for gcsput, several chunks) and checks
// that both Go clients met every one, and that their retries were measured.
// The clients' real backoffs make it take seconds.
func TestFixedFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark harness end to end")
	}
	t.Parallel()
	out := runQuick(t, "-clients", clientGcsput+","+clientOfficial, "-scenarios", "faults", "-size", "8MiB", "-chunk", "1MiB")
	for _, c := range []string{clientGcsput, clientOfficial} {
		for op, n := range map[string]int{opUpload: 4, opDownload: 3} {
			f := faultsRow(t, out, op, c)
			if f[0] != fmt.Sprintf("%d of %d", n, n) {
				t.Errorf("%s %s: faults %q, want all %d", op, c, f[0], n)
			}
			if r, err := strconv.Atoi(f[2]); err != nil || r < n {
				t.Errorf("%s %s: retries %q, want at least one per fault", op, c, f[2])
			}
		}
	}
	if !strings.Contains(out, " faults upload: gcsput ≥ 1.0× official") {
		t.Error("the faults target against the official client is not shown")
	}
}

// faultsRow returns the faults, requests, retries, slept and moved columns
// of the faults table's row for op and client.
func faultsRow(t *testing.T, out, op, client string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) == 9 && strings.TrimSpace(f[1]) == op && strings.TrimSpace(f[2]) == client {
			var cols []string
			for _, c := range f[3:8] {
				cols = append(cols, strings.TrimSpace(c))
			}
			return cols
		}
	}
	t.Fatalf("no faults row for %s %s", op, client)
	return nil
}

// TestQuickCLIs runs the installed CLIs in two scenarios: each start of
// gcloud costs seconds, so the full set is left to the benchmark itself.
func TestQuickCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark harness end to end")
	}
	var clis []string
	for _, c := range clients() {
		if (c.name == clientGcloud || c.name == clientRclone) && c.available() {
			clis = append(clis, c.name)
		}
	}
	if len(clis) == 0 {
		t.Skip("neither gcloud nor rclone is installed")
	}
	t.Parallel()
	// gcloud starts in seconds and moves a few small files a second: 10
	// files are enough to show it works and keep the test short.
	out := runQuick(t, "-clients", strings.Join(append(clis, clientHTTP), ","), "-scenarios", "large,small", "-parallel", "8", "-files", "10")
	checkRows(t, parseTable(t, out), []string{"large", "small-p8"}, append(clis, clientHTTP))
}

// runQuick runs gcsbench -quick on small data and returns its stdout.
func runQuick(t *testing.T, args ...string) string {
	t.Helper()
	var out, log bytes.Buffer
	args = append([]string{"-quick", "-size", "16MiB", "-files", "50", "-tmpdir", t.TempDir()}, args...)
	code := run(t.Context(), args, nil, &out, &log)
	t.Logf("gcsbench %s\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), log.String(), out.String())
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if strings.Contains(out.String(), "Failures:") {
		t.Fatal("the report lists failures")
	}
	return out.String()
}

// checkRows asserts that the table has exactly one row per scenario, op and
// client that runs there, each with figures a transfer can have.
func checkRows(t *testing.T, rows map[string]tableRow, scenarios, names []string) {
	t.Helper()
	var want []string
	for _, sc := range scenarios {
		for _, op := range []string{"upload", "download"} {
			for _, c := range expectedClients(sc) {
				if slices.Contains(names, c) {
					want = append(want, sc+" "+op+" "+c)
				}
			}
		}
	}
	for _, k := range want {
		r, ok := rows[k]
		if !ok {
			t.Errorf("no row %q", k)
			continue
		}
		// A CLI's small-file MB/s can round to 0.0 in the table (gcloud
		// moves a few 16 KiB files a second); its files/s cannot.
		if (r.mbps <= 0 && !strings.HasPrefix(k, "small")) || r.filesps <= 0 || r.cpu <= 0 || r.rss < 1 {
			t.Errorf("row %q: implausible figures %+v", k, r)
		}
		if strings.HasPrefix(k, "small") && slices.ContainsFunc(names, isOfficial) && r.xOfficial == "–" {
			t.Errorf("row %q: no ratio to the official client", k)
		}
		if r.xLoop == "–" && !strings.HasPrefix(k, scenarioCapped) {
			t.Errorf("row %q: no ratio to the loopback limit", k)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rows), len(want))
	}
}

func isOfficial(name string) bool { return name == clientOfficial || name == clientOfficialSingle }

// expectedClients are the clients the harness runs in a scenario here: the
// Go clients always, the CLIs when installed.
func expectedClients(scenario string) []string {
	sc := scenarioByName(scenario)
	var cs []string
	for _, c := range clients() {
		if c.in(sc) && c.available() {
			cs = append(cs, c.name)
		}
	}
	return cs
}

func scenarioByName(name string) scenario {
	switch {
	case name == scenarioFaults:
		return scenario{name: name, faults: true}
	case name == scenarioCapped:
		return scenario{name: name, capped: true}
	case strings.HasPrefix(name, "small"):
		return scenario{name: name, small: true}
	}
	return scenario{name: name}
}

// TestQuickWire runs the wire scenarios on tiny data with a 1 ms round
// trip: every row is there, each client's connections are counted on the
// protocol its configuration takes over TLS with h2 offered (gcsput's
// default HTTP/1.1, gcsput-h2's and the official client's HTTP/2), the fixed
// faults all fire, and every target is judged. No timing is asserted.
func TestQuickWire(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark harness end to end")
	}
	t.Parallel()
	cs := []string{clientGcsput, clientGcsputH2, clientOfficial, clientOfficialH1, clientHTTPCRC}
	out := runQuick(t, "-scenarios", "wire", "-clients", strings.Join(cs, ","), "-wire-size", "8MiB", "-wire-files", "20",
		"-wire-parallel", "4", "-chunk", "1MiB", "-rtt", "1ms")
	rows := wireRows(t, out)
	for _, sc := range []string{scenarioWireLarge, "wire-small-p4", scenarioWireFaults} {
		for _, op := range []string{opUpload, opDownload} {
			for c, proto := range map[string]string{clientGcsput: " h1", clientGcsputH2: " h2", clientOfficial: " h2", clientOfficialH1: " h1"} {
				r, ok := rows[sc+" "+op+" "+c]
				if !ok {
					t.Errorf("no wire row %s %s %s", sc, op, c)
					continue
				}
				if !strings.Contains(r[5], proto) || strings.Contains(r[5], "+ ") {
					t.Errorf("%s %s %s: connections %q, want only %q", sc, op, c, r[5], proto)
				}
				// One connection for every stream, unless a fault dropped it.
				if c == clientGcsputH2 && sc != scenarioWireFaults && !strings.HasPrefix(r[5], "1 h2") {
					t.Errorf("%s %s %s: connections %q, want one", sc, op, c, r[5])
				}
				if sc == scenarioWireFaults && !strings.HasPrefix(r[10], "4 of 4") && !strings.HasPrefix(r[10], "3 of 3") {
					t.Errorf("%s %s %s: faults %q, want all", sc, op, c, r[10])
				}
			}
		}
	}
	for _, target := range []string{"wire-large upload: gcsput ≥ 0.8× limit", "wire-small-p4 download: gcsput ≥ 0.8× j/RTT",
		"wire-tls upload: gcsput MB per CPU s ≥ 0.9× http-crc over TLS", "wire-tls download: gcsput MB per CPU s ≥ 0.9× http-crc over TLS"} {
		if !strings.Contains(out, "PASS "+target) && !strings.Contains(out, "FAIL "+target) {
			t.Errorf("target %q not judged", target)
		}
	}
}

// wireRows returns the cells of the wire table's rows by "scenario op
// client".
func wireRows(t *testing.T, out string) map[string][]string {
	t.Helper()
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 13 || !strings.HasPrefix(strings.TrimSpace(f[1]), wirePrefix) {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		rows[f[1]+" "+f[2]+" "+f[3]] = f
	}
	return rows
}
