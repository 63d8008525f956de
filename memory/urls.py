app_name='memory'
urlpatterns = []
