package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is one control-plane binary running in its own process group, its output in a file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // valid once done is closed
}

func startProcess(name, bin, logDir string, args []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	// Appended to, so a restarted binary's log follows its first run's.
	out, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	// Own process group, so a ctrl+c meant for `go test` does not reach the binaries before the
	// cleanups stop them; killed with the test binary even when it dies without running cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, with its error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process, then SIGKILL after grace.
//
// It signals through os.Process, which holds a pidfd, never kill(-pgid): once the process has
// been reaped its number is free and may become another process's (pid_max is 32768 here),
// such as the session leader of a tmux pane in a test running beside this one.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last lines of the process output, for error messages.
func (p *process) tail(lines int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	b = bytes.TrimRight(b, "\n")
	parts := bytes.Split(b, []byte("\n"))
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return string(bytes.Join(parts, []byte("\n")))
}

// failure describes a process that ended early, with the end of its output.
func (p *process) failure() error {
	ended, err := p.exited()
	if !ended {
		return nil
	}
	if err == nil {
		err = errors.New("exited")
	}
	return fmt.Errorf("%s ended early (%w); last output (%s):\n%s", p.name, err, p.logPath, p.tail(20))
}

// freePorts returns n distinct free TCP ports on loopback. They are released before use, which
// leaves a small window for another process to take one; the binaries then fail to start and
// the error says so.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
