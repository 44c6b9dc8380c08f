// Command testreport turns the `go test -json` stream into the quiet output and the counts that
// scripts/test.sh prints.
//
// Reading a stream (one module):
//
//	go test -json -race ./... | testreport -record STATE -module DIR
//
// prints one line per package (ok or FAIL, its test counts), the whole output of every failing
// test and of every package that failed outside a test (a build error, a panic in init), and
// appends the counts of the module to the file STATE (JSON lines). It exits 1 if anything failed
// and 0 otherwise, so a pipeline with `set -o pipefail` fails on either side.
//
// Printing the closing summary (every module recorded so far):
//
//	testreport -summary STATE
//
// prints the number of packages and tests passed, failed and skipped, and, grouped by reason,
// every skipped test with the message it skipped with (so a test that skips because a tool is
// missing says so in the summary, not only under -v).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	record := flag.String("record", "", "read `go test -json` on stdin and append its counts to this file")
	module := flag.String("module", ".", "the module directory the stream is from (named in the counts)")
	summary := flag.String("summary", "", "print the closing summary of the counts recorded in this file")
	verbose := flag.Bool("v", false, "also print the output of tests that passed or skipped")
	flag.Parse()
	switch {
	case *summary != "":
		recs, err := readRecords(*summary)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		printSummary(os.Stdout, recs)
	case *record != "":
		rec, err := report(os.Stdin, os.Stdout, *module, *verbose)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		if err := appendRecord(*record, rec); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		if rec.failed() {
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: testreport -record STATE [-module DIR] [-v] < go-test.json | testreport -summary STATE")
		os.Exit(2)
	}
}

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events name the package here
	Test       string
	Elapsed    float64
	Output     string
}

// Skip is one skipped test and the message it skipped with.
type Skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
}

// Record holds the counts of one module's `go test -json` stream.
type Record struct {
	Module         string   `json:"module"`
	Packages       int      `json:"packages"`        // packages that ran (with or without tests)
	PackagesFailed []string `json:"packages_failed"` // packages that failed, tests or build
	NoTests        int      `json:"no_tests"`        // packages with no test files
	Passed         int      `json:"passed"`          // tests (subtests and examples included)
	Failed         int      `json:"failed"`
	Skipped        int      `json:"skipped"`
	Skips          []Skip   `json:"skips"`
	Garbled        int      `json:"garbled,omitempty"` // lines that were not JSON (printed as they came)
}

func (r *Record) failed() bool { return r.Failed > 0 || len(r.PackagesFailed) > 0 }

// pkgState collects one package's events until its final pass, fail or skip.
type pkgState struct {
	output      []string            // package-level output (Test == "")
	tests       map[string][]string // test name -> its output lines
	passed      int
	failed      int
	skipped     int
	failedTests []string // in the order they failed
}

// report reads a `go test -json` stream from r, prints the quiet report to w and returns the
// module's counts.
func report(r io.Reader, w io.Writer, module string, verbose bool) (*Record, error) {
	rec := &Record{Module: module}
	pkgs := map[string]*pkgState{}
	get := func(name string) *pkgState {
		p := pkgs[name]
		if p == nil {
			p = &pkgState{tests: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	buildOutput := map[string][]string{} // import path -> compiler output

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// go vet and the go command itself print plain text (e.g. "go: downloading ...").
			fmt.Fprintf(w, "%s\n", line)
			rec.Garbled++
			continue
		}
		switch ev.Action {
		case "build-output":
			buildOutput[ev.ImportPath] = append(buildOutput[ev.ImportPath], ev.Output)
			continue
		case "build-fail":
			fmt.Fprintf(w, "FAIL %s [build failed]\n", ev.ImportPath)
			for _, l := range buildOutput[ev.ImportPath] {
				fmt.Fprint(w, indent(l))
			}
			continue
		}
		if ev.Package == "" {
			continue
		}
		p := get(ev.Package)
		if ev.Test == "" {
			switch ev.Action {
			case "output":
				p.output = append(p.output, ev.Output)
			case "pass", "fail", "skip":
				finishPackage(w, rec, ev, p, verbose)
				delete(pkgs, ev.Package)
			}
			continue
		}
		switch ev.Action {
		case "output":
			p.tests[ev.Test] = append(p.tests[ev.Test], ev.Output)
		case "pass":
			p.passed++
			if verbose {
				printLines(w, p.tests[ev.Test])
			}
		case "fail":
			p.failed++
			p.failedTests = append(p.failedTests, ev.Test)
		case "skip":
			p.skipped++
			rec.Skips = append(rec.Skips, Skip{Package: ev.Package, Test: ev.Test, Reason: skipReason(p.tests[ev.Test])})
			if verbose {
				printLines(w, p.tests[ev.Test])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return rec, fmt.Errorf("reading the go test stream: %w", err)
	}
	// A package whose stream ended without a final event (go test killed) failed.
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		finishPackage(w, rec, event{Action: "fail", Package: name}, pkgs[name], verbose)
		fmt.Fprintf(w, "    (the stream ended before %s finished)\n", name)
	}
	return rec, nil
}

// finishPackage prints the line of a package that ended and adds its counts to rec.
func finishPackage(w io.Writer, rec *Record, ev event, p *pkgState, verbose bool) {
	rec.Packages++
	rec.Passed += p.passed
	rec.Failed += p.failed
	rec.Skipped += p.skipped
	noTests := false
	for _, l := range p.output {
		if strings.Contains(l, "[no test files]") {
			noTests = true
		}
	}
	if noTests && ev.Action != "fail" {
		rec.NoTests++
		if verbose {
			fmt.Fprintf(w, "?    %s [no test files]\n", ev.Package)
		}
		return
	}
	counts := fmt.Sprintf("%d passed", p.passed)
	if p.failed > 0 {
		counts += fmt.Sprintf(", %d FAILED", p.failed)
	}
	if p.skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", p.skipped)
	}
	elapsed := time.Duration(ev.Elapsed * float64(time.Second)).Round(10 * time.Millisecond)
	if ev.Action != "fail" {
		fmt.Fprintf(w, "ok   %s %v (%s)\n", ev.Package, elapsed, counts)
		if verbose {
			printLines(w, p.output)
		}
		return
	}
	rec.PackagesFailed = append(rec.PackagesFailed, ev.Package)
	fmt.Fprintf(w, "FAIL %s %v (%s)\n", ev.Package, elapsed, counts)
	for _, t := range p.failedTests {
		printLines(w, p.tests[t])
	}
	// Output outside any test: a panic that killed the binary, a timeout, TestMain, FAIL lines.
	// When tests failed, the package lines only repeat "FAIL"; print them when nothing else says why.
	if len(p.failedTests) == 0 || packageSaysMore(p.output) {
		printLines(w, p.output)
	}
}

// packageSaysMore reports whether package-level output holds more than the usual closing lines.
func packageSaysMore(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t == "FAIL" || t == "PASS" || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "ok ") ||
			strings.HasPrefix(t, "coverage:") {
			continue
		}
		return true
	}
	return false
}

// skipReason is the message a test skipped with: its output without the === and --- lines.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		// "file_test.go:12: message": keep the message, the place is noise in a summary.
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") && !strings.Contains(t[:i], " ") {
			t = t[i+2:]
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprint(w, l)
	}
}

func indent(s string) string { return "    " + s }

func appendRecord(path string, rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Close())
}

func readRecords(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// printSummary prints the totals of recs and every skip, grouped by reason.
func printSummary(w io.Writer, recs []Record) {
	var total Record
	for _, r := range recs {
		total.Packages += r.Packages
		total.NoTests += r.NoTests
		total.PackagesFailed = append(total.PackagesFailed, r.PackagesFailed...)
		total.Passed += r.Passed
		total.Failed += r.Failed
		total.Skipped += r.Skipped
		total.Skips = append(total.Skips, r.Skips...)
	}
	// The wording avoids "N passed, M failed", the pattern CI reads for the conformance lines.
	fmt.Fprintf(w, "go: %d modules, %d packages (%d without tests, %d failed); tests: %d ok, %d failed, %d skipped\n",
		len(recs), total.Packages, total.NoTests, len(total.PackagesFailed), total.Passed, total.Failed, total.Skipped)
	for _, p := range total.PackagesFailed {
		fmt.Fprintf(w, "  failed package: %s\n", p)
	}
	type group struct {
		reason string
		tests  []string
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, s := range total.Skips {
		g := byReason[s.Reason]
		if g == nil {
			g = &group{reason: s.Reason}
			byReason[s.Reason] = g
			groups = append(groups, g)
		}
		g.tests = append(g.tests, shortPkg(s.Package)+"."+s.Test)
	}
	for _, g := range groups {
		names := g.tests
		more := ""
		if len(names) > 4 {
			more = fmt.Sprintf(" and %d more", len(names)-4)
			names = names[:4]
		}
		fmt.Fprintf(w, "  skipped %d: %s (%s%s)\n", len(g.tests), g.reason, strings.Join(names, ", "), more)
	}
}

// shortPkg drops the module path prefix common to every package of the repository.
func shortPkg(p string) string {
	if s := strings.TrimPrefix(strings.TrimPrefix(p, "github.com/mcpkit/mcpkit"), "/"); s != "" {
		return s
	}
	return "mcpkit"
}
