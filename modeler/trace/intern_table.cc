#include "modeler/trace/intern_table.h"

namespace lumos::modeler {

void InternTable::Clear() {
  strings_.clear();
  views_.clear();
  sparse_.clear();
  defined_ = 0;
  iid_by_data_.clear();
  reverse_built_ = false;
}

Status InternTable::Set(uint64_t iid, std::string_view value) {
  if (iid == 0 || iid > kMaxIid) {
    return ErrorStatus("interned string id %llu out of range",
                       static_cast<unsigned long long>(iid));
  }
  if ((iid < strings_.size() && strings_[iid] != nullptr) ||
      (!sparse_.empty() && sparse_.count(iid) != 0)) {
    return ErrorStatus("interned string id %llu defined twice in one frame",
                       static_cast<unsigned long long>(iid));
  }
  ++defined_;
  if (iid >= strings_.size() && iid > 2 * defined_ + kDenseSlack) {
    const std::string& kept = *(sparse_[iid] = std::make_unique<std::string>(value));
    if (reverse_built_) iid_by_data_[kept.data()] = iid;
    return Status::Ok();
  }
  if (iid >= strings_.size()) {
    // Strings kept aside while the vector was shorter stay in the map (Get looks there).
    strings_.resize(iid + 1);
    views_.resize(iid + 1);
  }
  strings_[iid] = std::make_unique<std::string>(value);
  views_[iid] = *strings_[iid];
  if (reverse_built_) iid_by_data_[strings_[iid]->data()] = iid;
  return Status::Ok();
}

uint64_t InternTable::IidOf(std::string_view view) const {
  if (view.empty()) return 0;
  if (!reverse_built_) {
    for (uint64_t iid = 0; iid < strings_.size(); ++iid) {
      if (strings_[iid] != nullptr) iid_by_data_[strings_[iid]->data()] = iid;
    }
    for (const auto& [iid, string] : sparse_) iid_by_data_[string->data()] = iid;
    reverse_built_ = true;
  }
  auto it = iid_by_data_.find(view.data());
  return it != iid_by_data_.end() && Get(it->second).size() == view.size() ? it->second : 0;
}

}  // namespace lumos::modeler
