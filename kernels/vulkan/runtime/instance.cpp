#include "kernels/vulkan/runtime/instance.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

#include "kernels/vulkan/runtime/vk_util.h"
#include "lib/core/error.h"

namespace mt::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

struct ValidationLog {
  std::mutex mutex;
  size_t errors = 0;
  std::string first;
};

ValidationLog& validation_log() {
  static ValidationLog log;
  return log;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                void*) {
  const char* message = data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    spdlog::error("vulkan validation: {}", message);
    ValidationLog& log = validation_log();
    std::lock_guard lock(log.mutex);
    if (log.errors++ == 0) log.first = message;
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    spdlog::warn("vulkan validation: {}", message);
  } else {
    spdlog::debug("vulkan validation: {}", message);
  }
  return VK_FALSE;  // the call that triggered the message goes on; check_validation() reports it
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_debug_message;
  return info;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const auto& layer : layers)
    if (std::strcmp(layer.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const char* name, const char* layer = nullptr) {
  uint32_t count = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data()) != VK_SUCCESS) return false;
  for (const auto& extension : extensions)
    if (std::strcmp(extension.extensionName, name) == 0) return true;
  return false;
}

// Owns the instance (and the messenger) for the whole process; destroyed at exit, when the
// validation layer reports objects the backend failed to destroy.
class InstanceHolder {
 public:
  InstanceHolder() {
    if (volkInitialize() != VK_SUCCESS) {
      error_ = "no Vulkan loader (libvulkan.so.1) found: install a Vulkan driver or use --device cpu";
      return;
    }
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion != nullptr) vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1) {
      error_ = "the Vulkan loader supports only Vulkan " + version_str(loader_version) + "; mt needs 1.1";
      return;
    }
    validation_ = validation_enabled();
    std::vector<const char*> layers, extensions;
    if (validation_) {
      if (!has_layer(kValidationLayer)) {
        error_ = "MT_VULKAN_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)";
        return;
      }
      if (!has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME, kValidationLayer) &&
          !has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
        error_ = "MT_VULKAN_VALIDATION=1 but VK_EXT_debug_utils is not available";
        return;
      }
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "mt";
    app.pEngineName = "mt";
    // 1.2 where the loader has it, so that devices report 1.2 core features (fp16, driver name).
    app.apiVersion = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    const VkDebugUtilsMessengerCreateInfoEXT messenger = messenger_info();
    if (validation_) info.pNext = &messenger;
    const VkResult result = vkCreateInstance(&info, nullptr, &instance_);
    if (result != VK_SUCCESS) {
      instance_ = VK_NULL_HANDLE;
      const char* icd = std::getenv("VK_ICD_FILENAMES");
      error_ = result == VK_ERROR_INCOMPATIBLE_DRIVER
                   ? fmt::format("no Vulkan driver found{}", icd != nullptr ? fmt::format(" (VK_ICD_FILENAMES={})", icd) : "")
                   : fmt::format("cannot create a Vulkan instance: {}", result_name(result));
      return;
    }
    volkLoadInstance(instance_);
    if (validation_) {
      check_vk(vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
      spdlog::info("vulkan: validation layer enabled (MT_VULKAN_VALIDATION=1)");
    }
  }

  ~InstanceHolder() {
    if (instance_ == VK_NULL_HANDLE) return;
    if (messenger_ != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    vkDestroyInstance(instance_, nullptr);
    // Errors the layer reports while the process tears down (objects never destroyed) can no longer
    // be thrown: they make the exit status a failure instead.
    if (validation_ && validation_log().errors > 0) {
      std::fprintf(stderr, "vulkan validation: %zu error(s) at exit; first: %s\n", validation_log().errors,
                   validation_log().first.c_str());
      std::_Exit(EXIT_FAILURE);
    }
  }

  VkInstance get() const {
    if (instance_ == VK_NULL_HANDLE) fail(ExitCode::unsupported, "vulkan: {}", error_);
    return instance_;
  }
  const std::string& error() const { return error_; }
  bool ok() const { return instance_ != VK_NULL_HANDLE; }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  std::string error_;
};

InstanceHolder& holder() {
  static InstanceHolder instance;
  return instance;
}

}  // namespace

bool validation_enabled() {
  const char* value = std::getenv("MT_VULKAN_VALIDATION");
  return value != nullptr && std::string_view(value) == "1";
}

VkInstance instance() { return holder().get(); }

std::optional<std::string> vulkan_unavailable_reason() {
  const InstanceHolder& h = holder();
  if (!h.ok()) return h.error();
  uint32_t count = 0;
  const VkResult result = vkEnumeratePhysicalDevices(h.get(), &count, nullptr);
  if (result != VK_SUCCESS) return fmt::format("cannot list Vulkan devices: {}", result_name(result));
  if (count == 0) {
    const char* icd = std::getenv("VK_ICD_FILENAMES");
    return fmt::format("no Vulkan device found{}", icd != nullptr ? fmt::format(" (VK_ICD_FILENAMES={})", icd) : "");
  }
  return std::nullopt;
}

void check_validation(const char* when) {
  ValidationLog& log = validation_log();
  std::lock_guard lock(log.mutex);
  if (log.errors == 0) return;
  const size_t errors = log.errors;
  const std::string first = std::move(log.first);
  log.errors = 0;
  log.first.clear();
  fail(ExitCode::failure, "vulkan validation: {} error{} during {}; first: {}", errors, errors == 1 ? "" : "s", when, first);
}

}  // namespace mt::vulkan
