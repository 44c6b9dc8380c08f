package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/skills"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// SkillsExtension is the identifier of the skills extension
// (SEP-2640), which AddSkills declares.
const SkillsExtension = skills.ExtensionID

// DirectoryMIMEType is the mimeType of a directory in
// resources/directory/read results.
const DirectoryMIMEType = "inode/directory"

// SkillsOptions configures AddSkills. The zero value serves the skills
// once loaded, with the extension's limits, without
// resources/directory/read.
type SkillsOptions struct {
	// Options are skills.Load's: the per-skill limits (MaxFiles, 512
	// files, and MaxBytes, 16 MiB; Off means no limit), the per-file
	// limit (MaxFileBytes: by default what a response of the server's
	// Quotas.MaxResponseBytes carries, 64 KiB less for the envelope, so
	// that every file listed can be read) and Strict.
	skills.Options
	// DirectoryRead serves resources/directory/read on the directories of
	// the skills, and declares it ("directoryRead": true).
	DirectoryRead bool
	// Watch, when positive, polls the file system every Watch for added,
	// changed and removed skills (skills.Watch): a change replaces the
	// skills served, as one snapshot, and sends
	// notifications/resources/list_changed through the Bus to the
	// listeners of every replica. Each replica watches its own files.
	// Zero (the default) loads the skills once. Watching stops at
	// Shutdown or at the next AddSkills.
	Watch time.Duration
}

// skillsEnvelope is what a resources/read response of a skill file takes
// besides the file's encoded bytes (the URI, the media type, the id), as
// skills.DefaultMaxFileBytes counts it.
const skillsEnvelope = 64 << 10

// skillsServe is one loaded skill set as the snapshot serves it.
type skillsServe struct {
	set     *skills.Set
	dirRead bool
	// files holds a resource entry for every file of every skill, read
	// from set; listed holds the resources/list items of the SKILL.md
	// files only.
	files  map[string]*resourceEntry
	listed []listItem
	// pages caches the encoded skills/list pages by their first index and
	// era (see skillsPageKey): a snapshot's skills do not change.
	pages sync.Map
}

// skillsPageKey identifies one cached skills/list page.
type skillsPageKey struct {
	start  int
	legacy bool // encoded without cache hints (the legacy era)
}

// skillsWatch is the running watcher of the last AddSkills.
type skillsWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// AddSkills serves the Agent Skills found in fsys (see skills.Load) with
// the skills extension, io.modelcontextprotocol/skills: skills/list and
// skills/get answer with each skill's entry (its SKILL.md URI, its
// frontmatter exactly as written, and the URI, digest and size of every
// file), every file is a skill:// resource for resources/read (SKILL.md is
// text/markdown, other files get a media type from their name and are text
// or blob), each SKILL.md is listed in resources/list with the
// frontmatter's name and description while the other files are readable
// but not listed, and, with opts.DirectoryRead, resources/directory/read
// lists a skill directory's children (subdirectories with mimeType
// inode/directory). The server declares the extension and the resources
// capability, in both eras. Bytes are served from memory or from fsys
// (checked against their digest), never copying the whole skill per
// request.
//
// Bad skills are refused with an error naming the file (a *skills.Error
// for each, joined). By default the other skills are served anyway and the
// returned error lists those left out; with opts.Strict, or when fsys's
// root cannot be read, nothing changes and the error says why. A later
// AddSkills replaces the skills of an earlier one. opts may be nil. It is
// safe to call while serving.
func (s *Server) AddSkills(fsys fs.FS, opts *SkillsOptions) error {
	var o SkillsOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxFileBytes == 0 && s.quota.maxResponse > 0 {
		o.MaxFileBytes = max(1, int64(s.quota.maxResponse)-skillsEnvelope)
	}
	set, err := skills.Load(fsys, &o.Options)
	if set == nil {
		return err
	}
	s.stopSkillsWatch()
	settings := map[string]any{}
	if o.DirectoryRead {
		settings["directoryRead"] = true
	}
	mo := &MethodOptions{Extension: SkillsExtension, ExtensionSettings: settings}
	s.AddMethod("skills/list", handleSkillsList, mo)
	s.AddMethod("skills/get", handleSkillsGet, mo)
	if o.DirectoryRead {
		s.AddMethod("resources/directory/read", handleDirectoryRead, mo)
	} else {
		s.RemoveMethod("resources/directory/read")
	}
	s.setSkills(set, o.DirectoryRead)
	if o.Watch > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		w := &skillsWatch{cancel: cancel, done: make(chan struct{})}
		s.mu.Lock()
		s.skillsWatch = w
		s.mu.Unlock()
		go func() {
			defer close(w.done)
			skills.Watch(ctx, fsys, &o.Options, o.Watch, set, func(set *skills.Set, err error) {
				if err != nil {
					s.log.Warn("mcp: skills changed, with refusals", "error", err)
				}
				if set != nil && ctx.Err() == nil {
					s.setSkills(set, o.DirectoryRead)
				}
			})
		}()
	}
	return err
}

// stopSkillsWatch stops the watcher of the last AddSkills, if any, and
// waits for it to finish.
func (s *Server) stopSkillsWatch() {
	s.mu.Lock()
	w := s.skillsWatch
	s.skillsWatch = nil
	s.mu.Unlock()
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// setSkills makes set the skills served and announces the change.
func (s *Server) setSkills(set *skills.Set, dirRead bool) {
	ss := &skillsServe{set: set, dirRead: dirRead, files: make(map[string]*resourceEntry)}
	for _, sk := range set.Skills() {
		for _, f := range sk.Files {
			r := Resource{URI: f.URI, Name: f.Path, MIMEType: f.MIMEType, Size: &f.Size}
			if f.Path == skills.ManifestName {
				r.Name, r.Description = sk.Name, sk.Description
			}
			e := &resourceEntry{resource: r, handler: readSkillFile(set)}
			e.encoded = mustMarshal(&e.resource)
			ss.files[f.URI] = e
			if f.Path == skills.ManifestName {
				ss.listed = append(ss.listed, listItem{key: f.URI, json: e.encoded, v: e})
			}
		}
	}
	s.mu.Lock()
	s.reg.skills = ss
	s.changed(ResourcesListChanged)
	s.mu.Unlock()
}

// readSkillFile returns the resources/read handler of the files of set.
func readSkillFile(set *skills.Set) ResourceHandler {
	return func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		data, f, err := set.ReadFile(req.URI)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ResourceNotFound(req.URI)
		}
		if err != nil {
			return nil, err
		}
		c := &ResourceContents{URI: f.URI, MIMEType: f.MIMEType}
		if f.Text {
			c.Text = string(data)
		} else {
			c.Blob = data
		}
		return &ReadResourceResult{Contents: []*ResourceContents{c}}, nil
	}
}

// addSkillResources adds the skill files of r to a snapshot being built:
// every file readable, the SKILL.md files listed. Resources registered with
// AddResource win over skill files with the same URI.
func (r *registry) addSkillResources(sn *snapshot, items []listItem) []listItem {
	ss := r.skills
	if ss == nil {
		return items
	}
	sn.skills = ss
	for u, e := range ss.files {
		if _, ok := r.resources[u]; !ok {
			sn.resources[u] = e
		}
	}
	for _, it := range ss.listed {
		if _, ok := r.resources[it.key]; !ok {
			items = append(items, it)
		}
	}
	return items
}

// skillsOf returns the skills the snapshot of req serves.
func skillsOf(req *MethodRequest) *skillsServe {
	if ss := req.x.snap.skills; ss != nil {
		return ss
	}
	return &skillsServe{}
}

// appendSkillsHint appends the caching members of skills results at
// 2026-07-28 (the server's Cache settings); legacy results carry none.
func appendSkillsHint(b []byte, req *MethodRequest) []byte {
	if !req.x.era().cacheHints() {
		return b
	}
	b = append(b, ',')
	return req.x.s.appendHint(b, 0, "")
}

// stringParam returns the string member name of params, or -32602.
func stringParam(params []byte, method, name string) (string, error) {
	v, ok := jsonscan.Lookup(params, name)
	if !ok {
		return "", InvalidParams("Invalid params: " + method + " needs a string " + name)
	}
	str, ok := jsonscan.String(v)
	if !ok {
		return "", InvalidParams("Invalid params: " + method + " needs a string " + name)
	}
	return str, nil
}

// pageStart returns the index of the first of n items sorted by key that
// the cursor of params names.
func pageStart(params []byte, n int, key func(int) string) (int, error) {
	cursor, err := cursorParam(params)
	if err != nil || cursor == "" {
		return 0, err
	}
	k, ok := decodeCursor(cursor)
	if !ok {
		return 0, InvalidParams("Invalid params: invalid cursor")
	}
	return sort.Search(n, func(i int) bool { return key(i) >= k }), nil
}

// handleSkillsList answers skills/list: the skill entries, a page at a
// time (an entry is never split), sorted by URI. Pages are encoded once
// per snapshot.
func handleSkillsList(ctx context.Context, req *MethodRequest) (any, error) {
	ss := skillsOf(req)
	all := ss.list()
	start, err := pageStart(req.Params, len(all), func(i int) string { return all[i].URI })
	if err != nil {
		return nil, err
	}
	key := skillsPageKey{start, !req.x.era().cacheHints()}
	if page, ok := ss.pages.Load(key); ok {
		return page.(json.RawMessage), nil
	}
	end := min(start+req.x.s.pageSize, len(all))
	size := 64
	for i := start; i < end; i++ {
		entry, _ := all[i].MarshalJSON()
		size += len(entry) + 1
	}
	b := append(make([]byte, 0, size+96), `{"skills":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		entry, _ := all[i].MarshalJSON()
		b = append(b, entry...)
	}
	b = append(b, ']')
	if end < len(all) {
		b = append(b, `,"nextCursor":`...)
		b = wire.AppendString(b, encodeCursor(all[end].URI))
	}
	b = appendSkillsHint(b, req)
	page := json.RawMessage(append(b, '}'))
	if ss.set != nil {
		ss.pages.Store(key, page)
	}
	return page, nil
}

func (ss *skillsServe) list() []*skills.Skill {
	if ss.set == nil {
		return nil
	}
	return ss.set.Skills()
}

// handleSkillsGet answers skills/get: the entry of the skill whose
// SKILL.md URI is params.uri, or -32602 with data {"uri"}.
func handleSkillsGet(ctx context.Context, req *MethodRequest) (any, error) {
	uri, err := stringParam(req.Params, "skills/get", "uri")
	if err != nil {
		return nil, err
	}
	ss := skillsOf(req)
	var sk *skills.Skill
	if ss.set != nil {
		sk = ss.set.Skill(uri)
	}
	if sk == nil {
		return nil, &Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: no skill has the URI " + strconv.Quote(uri), Data: map[string]string{"uri": uri}}
	}
	entry, _ := sk.MarshalJSON()
	b := append(make([]byte, 0, len(entry)+96), `{"skill":`...)
	b = append(b, entry...)
	b = appendSkillsHint(b, req)
	return json.RawMessage(append(b, '}')), nil
}

// handleDirectoryRead answers resources/directory/read: the children of a
// directory of a skill, a page at a time, or -32602 for a URI that names
// no such directory.
func handleDirectoryRead(ctx context.Context, req *MethodRequest) (any, error) {
	uri, err := stringParam(req.Params, "resources/directory/read", "uri")
	if err != nil {
		return nil, err
	}
	ss := skillsOf(req)
	var children []skills.DirEntry
	ok := false
	if ss.set != nil && ss.dirRead {
		children, ok = ss.set.Dir(uri)
	}
	if !ok {
		return nil, &Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: not a directory of a skill: " + strconv.Quote(uri), Data: map[string]string{"uri": uri}}
	}
	start, err := pageStart(req.Params, len(children), func(i int) string { return children[i].Name })
	if err != nil {
		return nil, err
	}
	end := min(start+req.x.s.pageSize, len(children))
	b := append(make([]byte, 0, 256), `{"resources":[`...)
	for i := start; i < end; i++ {
		c := children[i]
		if i > start {
			b = append(b, ',')
		}
		b = append(b, `{"uri":`...)
		b = wire.AppendString(b, c.URI)
		b = append(b, `,"name":`...)
		b = wire.AppendString(b, c.Name)
		b = append(b, `,"mimeType":`...)
		if c.IsDir() {
			b = wire.AppendString(b, DirectoryMIMEType)
		} else {
			b = wire.AppendString(b, c.File.MIMEType)
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, c.File.Size, 10)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if end < len(children) {
		b = append(b, `,"nextCursor":`...)
		b = wire.AppendString(b, encodeCursor(children[end].Name))
	}
	b = appendSkillsHint(b, req)
	return json.RawMessage(append(b, '}')), nil
}
