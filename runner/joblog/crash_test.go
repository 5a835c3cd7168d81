package joblog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// holdEnv names the joblog a re-executed test binary opens and holds until
// its stdin closes (see TestMain): POSIX and flock locks are per process or
// per open file, so a lock test needs a second real process.
const holdEnv = "JOBLOG_TEST_HOLD"

// holdMain is the helper process: it opens the joblog for appending, says
// "locked" (or the error) on stdout and holds the log until stdin closes.
func holdMain(path string) int {
	w, err := Create(path, true)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	if err := w.Close(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// startHolder runs the helper process on path and returns once it holds
// the joblog; closing the returned stdin lets it exit.
func startHolder(t *testing.T, path string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	return cmd, stdin
}

// TestSecondWriterFails: a second run on the same
// joblog used to truncate the first one's lines; now it fails at open and
// names the process that holds the log.
func TestSecondWriterFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joblog")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Entry{Seq: 1, Command: "first"})
	w.Close()

	holder, stdin := startHolder(t, path)
	for _, resume := range []bool{true, false} {
		w, err := Create(path, resume)
		if err == nil {
			w.Close()
			t.Fatalf("Create(resume=%v) while process %d holds the log succeeded", resume, holder.Process.Pid)
		}
		t.Log(err)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), strconv.Itoa(holder.Process.Pid)) {
			t.Errorf("Create(resume=%v) err = %v, want ErrLocked naming pid %d", resume, err, holder.Process.Pid)
		}
	}
	if rec, err := Load(path); err != nil || !rec.Ended(1) {
		t.Fatalf("the refused open changed the log: %v, %v", rec, err)
	}
	// Once the holder is gone (here: killed, as a crash would), the log opens.
	stdin.Close()
	holder.Process.Kill()
	holder.Wait()
	w, err = Create(path, true)
	if err != nil {
		t.Fatalf("Create after the holder died: %v", err)
	}
	w.Close()
}

// TestResumeCutsTornTail: a last line without
// its newline (a crash or a full disk mid-write) used to swallow the next
// record, so a job that never ran counted as done.
func TestResumeCutsTornTail(t *testing.T) {
	for _, torn := range []string{
		"4\t:\t17", // cut in the Starttime
		"5\t:\t1.000\t     1.000\t0\t0\t0\t0\techo hel", // cut in the Command: all nine fields
		"Seq\tHost\tStart", // cut in the header of a new log
	} {
		path := filepath.Join(t.TempDir(), "joblog")
		if !strings.HasPrefix(torn, "Seq") {
			w, err := Create(path, false)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(Entry{Seq: 1, Command: "a"})
			w.Write(Entry{Seq: 3, Exitval: 2, Command: "c"})
			w.Close()
		}
		before, _ := os.ReadFile(path)
		if len(before) == 0 {
			before = []byte(Header + "\n")
		}
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		f.WriteString(torn)
		f.Close()

		// Reading ignores the torn line: its job did not complete.
		rec, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Ended(4) || rec.Ended(5) || rec.Malformed != 0 {
			t.Errorf("%q: Load counts the torn line: ended(4)=%v ended(5)=%v malformed=%d", torn, rec.Ended(4), rec.Ended(5), rec.Malformed)
		}

		w, err := Create(path, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(Entry{Seq: 200, Command: "z"}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		b, _ := os.ReadFile(path)
		if want := string(before) + "200\t:\t0.000\t     0.000\t0\t0\t0\t0\tz\n"; string(b) != want {
			t.Errorf("%q: resumed log is\n%s\nwant (torn bytes cut, record on its own line)\n%s", torn, b, want)
		}
		rec, err = Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Ended(200) || rec.Ended(4) || rec.Ended(5) || rec.Malformed != 0 {
			t.Errorf("%q: after resume ended(200)=%v ended(4)=%v ended(5)=%v malformed=%d:\n%s",
				torn, rec.Ended(200), rec.Ended(4), rec.Ended(5), rec.Malformed, b)
		}
		if !bytes.HasPrefix(b, []byte(Header+"\n")) {
			t.Errorf("%q: log lost its header:\n%s", torn, b)
		}
	}
}

// TestHugeCommandReadsBack: a 20 MB input in
// --worker mode wrote a joblog line that --resume could not read
// ("bufio.Scanner: token too long").
func TestHugeCommandReadsBack(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader()
	big := strings.Repeat("x", 20<<20)
	w.Write(Entry{Seq: 1, Exitval: 3, Command: big})
	w.Write(Entry{Seq: 2, Command: "small"})
	var got []Entry
	for e, err := range Entries(&buf) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 2 || got[0].Seq != 1 || got[0].Exitval != 3 || got[1].Command != "small" {
		t.Fatalf("read %d entries", len(got))
	}
}
