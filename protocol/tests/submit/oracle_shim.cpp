// A few C entry points into HTCondor's own submit code (libcondor_utils, as
// shipped in the pinned `htcondor` Python wheel), for oracle.py: the
// Python bindings parse a submit description but make job ads only while
// talking to a schedd; these calls make them without one, as
// `condor_submit -dry-run` does.
//
// Only the exported functions' signatures are declared here (their
// mangled names must match the library's); no HTCondor header or code is
// used. The SubmitHash object is the one the bindings' Submit owns.
#include <cstdlib>
#include <cstring>
#include <string>

namespace classad {
struct CaseIgnLTStr;
class ClassAd {
  public:
    const ClassAd *GetChainedParentAd() const;
};
}  // namespace classad
template <class K, class C> class flat_set;
enum _submit_file_role : int;

struct JOB_ID_KEY {
    int cluster;
    int proc;
};

class SubmitHash {
  public:
    classad::ClassAd *make_job_ad(JOB_ID_KEY, int, int, bool, bool,
                                  int (*)(void *, SubmitHash *, _submit_file_role, const char *, int),
                                  void *);
    int init_base_ad(long, const char *);
    void set_live_submit_variable(const char *, const char *, bool);
};

typedef flat_set<std::string, classad::CaseIgnLTStr> References;
bool sPrintAdAsJson(std::string &, const classad::ClassAd &, const References *, bool);

extern "C" {

int starling_init_base_ad(void *hash, long now, const char *owner) {
    return static_cast<SubmitHash *>(hash)->init_base_ad(now, owner);
}

// The value must outlive the hash: it is copied and never freed (the
// oracle is a short-lived process).
void starling_set_live(void *hash, const char *name, const char *value) {
    static_cast<SubmitHash *>(hash)->set_live_submit_variable(strdup(name), strdup(value), true);
}

// The job ad of (cluster, proc) as HTCondor's JSON (exact strings,
// expressions in new ClassAd syntax), malloc'd: the cluster ad it is
// chained to (`{}` if none), a newline, then its own attributes; NULL
// when HTCondor refuses the job (its error stack says why).
char *starling_make_job_ad(void *hash, int cluster, int proc, int item, int step) {
    JOB_ID_KEY id = {cluster, proc};
    classad::ClassAd *ad =
        static_cast<SubmitHash *>(hash)->make_job_ad(id, item, step, false, false, nullptr, nullptr);
    if (!ad) return nullptr;
    std::string out;
    const classad::ClassAd *parent = ad->GetChainedParentAd();
    if (parent) {
        sPrintAdAsJson(out, *parent, nullptr, true);
    } else {
        out = "{}";
    }
    out += "\n";
    sPrintAdAsJson(out, *ad, nullptr, true);
    return strdup(out.c_str());
}

void starling_free(char *p) { free(p); }
}
