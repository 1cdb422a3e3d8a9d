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
class ClassAd;
struct CaseIgnLTStr;
}  // namespace classad
template <class K, class C> class flat_set;
enum SortHow : int;
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
int sPrintAd(std::string &, const classad::ClassAd &, const References *, const References *, SortHow);

extern "C" {

int starling_init_base_ad(void *hash, long now, const char *owner) {
    return static_cast<SubmitHash *>(hash)->init_base_ad(now, owner);
}

// The value must outlive the hash: it is copied and never freed (the
// oracle is a short-lived process).
void starling_set_live(void *hash, const char *name, const char *value) {
    static_cast<SubmitHash *>(hash)->set_live_submit_variable(strdup(name), strdup(value), true);
}

// The job ad of (cluster, proc) in HTCondor's long form, malloc'd; NULL
// when HTCondor refuses the job (its error stack says why).
char *starling_make_job_ad(void *hash, int cluster, int proc, int item, int step) {
    JOB_ID_KEY id = {cluster, proc};
    classad::ClassAd *ad =
        static_cast<SubmitHash *>(hash)->make_job_ad(id, item, step, false, false, nullptr, nullptr);
    if (!ad) return nullptr;
    std::string out;
    sPrintAd(out, *ad, nullptr, nullptr, static_cast<SortHow>(0));
    return strdup(out.c_str());
}

void starling_free(char *p) { free(p); }
}
