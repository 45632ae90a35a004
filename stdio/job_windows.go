package stdio

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Job objects stand in for process groups on Windows. Each child is put in
// a job object of its own, created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
// right after it starts. The processes it starts are in the job too, so that
// terminating the job stops the whole tree (npx.cmd, then node), and since
// only the aggregator holds the job's handle, Windows kills the tree when
// the aggregator ends, however it ends.
//
// A process that the child starts before it is assigned to its job, in the
// microseconds between CreateProcess and AssignProcessToJobObject, is not in
// the job and escapes both; launchers take far longer than that to start
// anything. (Starting the child suspended would close that gap, but
// os/exec does not give us its thread to resume.)

var (
	kernel32                     = syscall.NewLazyDLL("kernel32.dll") // a KnownDLL: always the system's
	procCreateJobObjectW         = kernel32.NewProc("CreateJobObjectW")
	procSetInformationJobObject  = kernel32.NewProc("SetInformationJobObject")
	procAssignProcessToJobObject = kernel32.NewProc("AssignProcessToJobObject")
	procTerminateJobObject       = kernel32.NewProc("TerminateJobObject")
)

const (
	jobObjectExtendedLimitInformation = 9      // JOBOBJECTINFOCLASS
	jobObjectLimitKillOnJobClose      = 0x2000 // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	processSetQuota                   = 0x0100 // PROCESS_SET_QUOTA, needed with PROCESS_TERMINATE to assign
	jobExitCode                       = 1      // what a terminated process exits with, as with os.Process.Kill
)

// jobs holds the job object of each child from its start until it has
// exited. It is keyed by the *os.Process, not the pid, which Windows may
// give to a new process once the child has been reaped.
var jobs struct {
	mu        sync.Mutex // protects byProcess
	byProcess map[*os.Process]syscall.Handle
}

// attachJob puts p in a new kill-on-close job object and records it. On an
// error p is in no job of ours and nothing is recorded.
func attachJob(p *os.Process) error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return err
	}
	if err := assignToJob(job, p.Pid); err != nil {
		syscall.CloseHandle(job) // an empty job: closing it kills nothing
		return err
	}
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if jobs.byProcess == nil {
		jobs.byProcess = make(map[*os.Process]syscall.Handle)
	}
	jobs.byProcess[p] = job
	return nil
}

// jobOf returns the job of p, if it has one; forget also removes it from
// the record, leaving the handle to the caller to close.
func jobOf(p *os.Process, forget bool) (syscall.Handle, bool) {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	job, ok := jobs.byProcess[p]
	if ok && forget {
		delete(jobs.byProcess, p)
	}
	return job, ok
}

// newKillOnCloseJob creates an unnamed job object whose processes are all
// killed when its last handle is closed. The handle is not inheritable.
func newKillOnCloseJob() (syscall.Handle, error) {
	r, _, err := procCreateJobObjectW.Call(0, 0)
	if r == 0 {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	job := syscall.Handle(r)
	info := extendedLimitInfo(jobObjectLimitKillOnJobClose, int(unsafe.Sizeof(uintptr(0))))
	var aligned [extendedLimitInfoMax / 8]uint64 // the struct's 8-byte alignment
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&aligned[0])), len(aligned)*8)
	copy(buf, info)
	r, _, err = procSetInformationJobObject.Call(uintptr(job), jobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&aligned[0])), uintptr(len(info)))
	if r == 0 {
		syscall.CloseHandle(job)
		return 0, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	return job, nil
}

// assignToJob puts the running process pid in job.
func assignToJob(job syscall.Handle, pid int) error {
	// The pid is still the child's: its *os.Process holds a handle to it
	// until it is reaped, which happens only after startCmd returns.
	h, err := syscall.OpenProcess(processSetQuota|syscall.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("OpenProcess: %w", err)
	}
	defer syscall.CloseHandle(h)
	r, _, err := procAssignProcessToJobObject.Call(uintptr(job), uintptr(h))
	if r == 0 {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil
}

// terminateJob terminates every process in job.
func terminateJob(job syscall.Handle) error {
	r, _, err := procTerminateJobObject.Call(uintptr(job), jobExitCode)
	if r == 0 {
		return fmt.Errorf("TerminateJobObject: %w", err)
	}
	return nil
}

// extendedLimitInfoMax is the size of JOBOBJECT_EXTENDED_LIMIT_INFORMATION
// with 8-byte pointers, the largest it is.
const extendedLimitInfoMax = 144

// extendedLimitInfo returns a JOBOBJECT_EXTENDED_LIMIT_INFORMATION laid out
// as winnt.h lays it out for pointers (SIZE_T, ULONG_PTR) of ptrSize bytes,
// 8 or 4: 144 or 112 bytes. LimitFlags is flags; every other field is zero.
// Windows is little-endian on every architecture.
func extendedLimitInfo(flags uint32, ptrSize int) []byte {
	l := extendedLimitLayout(ptrSize)
	b := make([]byte, l.size)
	binary.LittleEndian.PutUint32(b[l.limitFlags:], flags)
	return b
}

// limitLayout is where the fields that matter are in a
// JOBOBJECT_EXTENDED_LIMIT_INFORMATION.
type limitLayout struct {
	limitFlags int // offset of BasicLimitInformation.LimitFlags
	size       int // the whole struct
}

// extendedLimitLayout walks the struct's fields, aligning each to its size
// as the C compilers for Windows do (LARGE_INTEGER and ULONGLONG on 8 bytes,
// also on 32-bit Windows).
func extendedLimitLayout(ptrSize int) limitLayout {
	off := 0
	field := func(size int) int {
		off = (off + size - 1) / size * size
		at := off
		off += size
		return at
	}
	end := func(align int) int { return (off + align - 1) / align * align }

	var l limitLayout
	// JOBOBJECT_BASIC_LIMIT_INFORMATION
	field(8)                // PerProcessUserTimeLimit, LARGE_INTEGER
	field(8)                // PerJobUserTimeLimit, LARGE_INTEGER
	l.limitFlags = field(4) // LimitFlags, DWORD
	field(ptrSize)          // MinimumWorkingSetSize, SIZE_T
	field(ptrSize)          // MaximumWorkingSetSize, SIZE_T
	field(4)                // ActiveProcessLimit, DWORD
	field(ptrSize)          // Affinity, ULONG_PTR
	field(4)                // PriorityClass, DWORD
	field(4)                // SchedulingClass, DWORD
	off = end(8)            // the struct is aligned as its LARGE_INTEGERs
	// IO_COUNTERS: six ULONGLONG
	for i := 0; i < 6; i++ {
		field(8)
	}
	field(ptrSize) // ProcessMemoryLimit, SIZE_T
	field(ptrSize) // JobMemoryLimit, SIZE_T
	field(ptrSize) // PeakProcessMemoryUsed, SIZE_T
	field(ptrSize) // PeakJobMemoryUsed, SIZE_T
	l.size = end(8)
	return l
}
